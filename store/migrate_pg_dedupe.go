package store

import (
	"context"
	"time"
)

// maxDedupeWindow is the longest window the API allows (86400 s).
const maxDedupeWindow = 24 * time.Hour

// keyRecentDedupeEvents gives the copied events that SQLite's dedupe
// memory held (dedupe_key NULL there, webhook_dedupe_memory.go) their key
// on PostgreSQL, which dedupes through the index only: a delivery right
// after the move still finds an event received within its webhook's window.
func (db *DB) keyRecentDedupeEvents(ctx context.Context, tx *Tx) error {
	now := db.Now()
	rows, err := db.r.QueryContext(ctx, `SELECT e.id, e.body_hash, e.received_at, w.dedupe_window_seconds
		FROM webhook_events e JOIN webhooks w ON w.task_id = e.task_id
		WHERE w.dedupe_window_seconds > 0 AND e.received_at >= ? AND e.dedupe_key IS NULL AND e.test = 0
		AND e.replay_of IS NULL`, TS(now.Add(-maxDedupeWindow)))
	if err != nil {
		return err
	}
	type keyed struct {
		id  string
		key int64
	}
	var todo []keyed
	for rows.Next() {
		var id, hash, at string
		var secs int
		if err := rows.Scan(&id, &hash, &at, &secs); err != nil {
			rows.Close()
			return err
		}
		if !ParseTS(at).Before(now.Add(-time.Duration(secs) * time.Second)) {
			todo = append(todo, keyed{id, dedupeKey(hash)})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, k := range todo {
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_events SET dedupe_key = ? WHERE id = ?`, k.key, k.id); err != nil {
			return err
		}
	}
	return nil
}

// indexHeldKeys moves the main keys SQLite's key memory held
// (main_key_held, webhook_key_memory.go) into main_key on PostgreSQL,
// whose lookups read the index only: an alert right after the move still
// joins its open incident.
func indexHeldKeys(ctx context.Context, tx *Tx) error {
	_, err := tx.ExecContext(ctx, `UPDATE incidents SET main_key = main_key_held, main_key_held = NULL WHERE main_key_held IS NOT NULL`)
	return err
}
