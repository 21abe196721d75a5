package store

import (
	"context"
	"sort"
)

// InspectPostgres is Inspect for a cluster's database: it connects (read
// only), compares the applied migrations with this binary's, and never
// migrates. Integrity is "ok" when the database answers; PostgreSQL checks
// its own pages.
func InspectPostgres(ctx context.Context, databaseURL string) (Inspection, error) {
	in := Inspection{IncrementalVacuum: true} // autovacuum returns space itself
	r, err := openPGPool(databaseURL, true, "opsagent-doctor")
	if err != nil {
		return in, err
	}
	defer r.Close()
	if err := r.PingContext(ctx); err != nil {
		return in, err
	}
	in.Exists, in.Integrity = true, "ok"
	var exists bool
	if err := r.QueryRowContext(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return in, err
	}
	applied := map[string]bool{}
	if exists {
		rows, err := r.QueryContext(ctx, `SELECT name FROM schema_migrations`)
		if err != nil {
			return in, err
		}
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				rows.Close()
				return in, err
			}
			applied[n] = true
		}
		rows.Close()
	}
	files, err := (&DB{pg: true}).migrationFiles()
	if err != nil {
		return in, err
	}
	for n := range files {
		if !applied[n] {
			in.Pending = append(in.Pending, n)
		}
	}
	for n := range applied {
		if _, ok := files[n]; !ok {
			in.Unknown = append(in.Unknown, n)
		}
	}
	sort.Strings(in.Pending)
	sort.Strings(in.Unknown)
	return in, nil
}

// PeekUserCountPostgres is PeekUserCount for a cluster's database: it counts
// accounts over a read-only connection, never migrating (a database not yet
// migrated counts 0), for --print-config.
func PeekUserCountPostgres(ctx context.Context, databaseURL string) (int, error) {
	r, err := openPGPool(databaseURL, true, "opsagent-print-config")
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var exists bool
	if err := r.QueryRowContext(ctx, `SELECT to_regclass('users') IS NOT NULL`).Scan(&exists); err != nil || !exists {
		return 0, err
	}
	var n int
	err = r.QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&n)
	return n, err
}
