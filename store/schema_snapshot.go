package store

import (
	"context"
	_ "embed"
	"strings"
)

// schemaSnapshot is the SQLite schema (and the rows migrations seed) that
// replaying the migrations it names produces, taken by TestSchemaSnapshot
// (`OPSAGENT_UPDATE_SCHEMA_SNAPSHOT=1 go test ./store -run TestSchemaSnapshot`).
// A new data directory applies it in one statement batch instead of
// replaying those migrations: SQLite re-reads its whole schema after every
// ALTER TABLE, and that replay was most of a cold start (about 70 ms of the
// 103 ms before the first 200 on a quiet machine). Migrations newer than the
// snapshot are applied after it as usual, so a stale snapshot is only slower,
// never wrong; the test proves the two paths give the same database.
//
//go:embed schema_sqlite.sql
var schemaSnapshot string

// useSchemaSnapshot is switched off by the test that compares both paths.
var useSchemaSnapshot = true

// snapshotMarker starts each line of the snapshot's header that names a
// migration it covers.
const snapshotMarker = "-- migration: "

// snapshotCovers returns the migrations the snapshot stands for, or nil when
// it cannot be used for this set of files: it names one this binary does
// not have, or a pending file sorts before its last (a migration inserted
// into the past must be replayed in its place).
func snapshotCovers(snapshot string, pending []string) []string {
	var covered []string
	for _, line := range strings.Split(snapshot, "\n") {
		if name, ok := strings.CutPrefix(line, snapshotMarker); ok {
			covered = append(covered, strings.TrimSpace(name))
		}
	}
	if len(covered) == 0 || len(covered) > len(pending) {
		return nil
	}
	for i, n := range covered {
		if pending[i] != n {
			return nil
		}
	}
	return covered
}

// applySnapshot creates the snapshot's schema inside tx and records the
// migrations it covers as applied.
func applySnapshot(ctx context.Context, tx *Tx, covered []string) error {
	if _, err := tx.ExecContext(ctx, schemaSnapshot); err != nil {
		return err
	}
	for _, n := range covered {
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(name, applied_at) VALUES (?, ?)`, n, TS(tx.Now)); err != nil {
			return err
		}
	}
	return nil
}
