package store

import (
	"context"
	"database/sql"
	"os"
	"time"
)

// ProbeWrite proves the database accepts a write end to end: it takes the
// write lock, rewrites the heartbeat row and commits (fsync included). A
// read-only file, a full disk or a lock held elsewhere make it fail or wait.
func (db *DB) ProbeWrite(ctx context.Context) error {
	return db.writeOnce(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO ops_heartbeat (id, beat_at) VALUES (1, ?)
			ON CONFLICT(id) DO UPDATE SET beat_at = excluded.beat_at`, TS(tx.Now))
		return err
	})
}

// CountPendingApprovals counts approvals waiting for a decision, all orgs.
func (db *DB) CountPendingApprovals(ctx context.Context) (int, error) {
	var n int
	err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM approvals WHERE status = 'pending'`).Scan(&n)
	return n, err
}

// FileSizes returns the sizes in bytes of the database and its
// write-ahead log: on SQLite the file and its -wal file (0 when the log does
// not exist, e.g. after a checkpoint truncated it); on PostgreSQL the
// database's size as the server reports it, and no log of its own (the
// cluster's WAL is shared by every database in it).
func (db *DB) FileSizes(ctx context.Context) (main, wal int64) {
	if db.pg {
		_ = db.r.QueryRowContext(ctx, `SELECT pg_database_size(current_database())`).Scan(&main)
		return main, 0
	}
	if fi, err := os.Stat(db.Path); err == nil {
		main = fi.Size()
	}
	if fi, err := os.Stat(db.Path + "-wal"); err == nil {
		wal = fi.Size()
	}
	return main, wal
}

// PeekUserCount counts accounts in the database at path without migrating
// or writing it (a missing file counts 0), for --print-config and doctor.
func PeekUserCount(ctx context.Context, path string) (int, error) {
	if _, err := os.Stat(path); err != nil {
		if os.IsNotExist(err) {
			return 0, nil
		}
		return 0, err
	}
	conn, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)&_pragma=busy_timeout(5000)")
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	// A running server may hold the database briefly (a checkpoint, a
	// migration on its first start): try a few times before giving up.
	var n int
	for attempt := 0; ; attempt++ {
		err = conn.QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&n)
		if err == nil || attempt == 4 || ctx.Err() != nil {
			return n, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}
