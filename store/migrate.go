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
	for _, n := range names {
		if applied[n] {
			continue
		}
		body := files[n]
		err = db.Write(ctx, func(tx *Tx) error {
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(name, applied_at) VALUES (?, ?)`, n, TS(tx.Now))
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %s: %w", n, err)
		}
	}
	return nil
}
