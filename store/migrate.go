package store

import (
	"context"
	"embed"
	"fmt"
	"sort"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrate applies every embedded migration not yet recorded, each in its own
// transaction, in name order. A database that records a migration this binary
// does not know was written by a newer binary: refuse it rather than guess.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	unlock, err := db.migrateLock(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer unlock()
	files, err := db.migrationFiles()
	if err != nil {
		return err
	}
	var names []string
	known := map[string]bool{}
	for n := range files {
		names = append(names, n)
		known[n] = true
	}
	sort.Strings(names)
	applied := map[string]bool{}
	rows, err := db.w.QueryContext(ctx, `SELECT name FROM schema_migrations`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		applied[n] = true
	}
	rows.Close()
	for n := range applied {
		if !known[n] {
			return fmt.Errorf("database schema is newer than this binary (it has migration %s); upgrade opsagent", n)
		}
	}
	var pending []string
	for _, n := range names {
		if !applied[n] {
			pending = append(pending, n)
		}
	}
	if !db.pg && len(pending) > 1 {
		// On SQLite every pending migration goes in one transaction: one
		// commit (one fsync under synchronous=FULL) instead of one each, which
		// was most of a cold start's time on a fresh data directory, and an
		// upgrade that fails half-way leaves the schema as it was.
		var failed string
		err := db.Write(ctx, func(tx *Tx) error {
			todo := pending // the closure may run again (a retried write)
			if len(applied) == 0 && useSchemaSnapshot {
				if covered := snapshotCovers(schemaSnapshot, todo); covered != nil {
					if err := applySnapshot(ctx, tx, covered); err != nil {
						failed = "schema snapshot"
						return err
					}
					todo = todo[len(covered):]
				}
			}
			for _, n := range todo {
				if err := applyMigration(ctx, tx, n, files[n]); err != nil {
					failed = n
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("migration %s: %w", failed, err)
		}
		return nil
	}
	for _, n := range pending {
		if err := db.Write(ctx, func(tx *Tx) error { return applyMigration(ctx, tx, n, files[n]) }); err != nil {
			return fmt.Errorf("migration %s: %w", n, err)
		}
	}
	return nil
}

// applyMigration runs one migration's SQL and records it, inside tx.
func applyMigration(ctx context.Context, tx *Tx, name, body string) error {
	if _, err := tx.ExecContext(ctx, body); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(name, applied_at) VALUES (?, ?)`, name, TS(tx.Now))
	return err
}
