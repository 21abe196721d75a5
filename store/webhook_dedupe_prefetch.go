package store

import (
	"database/sql"
	"time"
)

// A group commit's dedupe lookups are made at once, one query per chunk of
// keys, before its events are stored: one statement per event cost the
// writer a sixth of its time, nearly all of it the statement's own
// overhead (in a storm of distinct alerts every lookup misses). The batch's
// own events are found in its memory (InsertWebhookEvents' byHash), as
// before. On SQLite the recent events are in the dedupe memory
// (webhook_dedupe_memory.go) and only the keys of tasks with an indexed
// event still inside their window are looked up here.

const prefetchDedupeHead = `SELECT dedupe_key, task_id, body_hash, id, received_at FROM webhook_events
	WHERE received_at >= ? AND dedupe_key IN (`

// prefetchDedupeStmts are the prefetch's statements by key count.
var prefetchDedupeStmts = inStmts(prefetchDedupeHead)

func init() { addIngestStmts(prefetchDedupeStmts) }

// storedEvent is the newest stored event of a task and body hash.
type storedEvent struct{ id, receivedAt string }

// queueDedupe returns, for the batch's items that dedupe, the newest
// stored event of each task and body hash received within the longest
// window of the batch (each item then checks its own window), once the
// queries it queues ran (runQueued). need says which items' windows the
// index can answer (on SQLite most are in memory).
func (s *txStmts) queueDedupe(items []IngestItem, need func(i int) bool) map[[2]string]storedEvent {
	var longest time.Duration
	var keys []any
	seen := map[int64]bool{}
	for i, it := range items {
		if it.DedupeWindow <= 0 || !need(i) {
			continue
		}
		longest = max(longest, it.DedupeWindow)
		if k := dedupeKey(it.Event.BodyHash); !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	found := map[[2]string]storedEvent{}
	if len(keys) == 0 {
		return found
	}
	from := TS(s.tx.Now.Add(-longest))
	scan := storedEvents(found)
	if s.tx.db.pg { // one statement, the keys an array (webhook_ingest_prefetch_pg.go)
		ns := make([]int64, len(keys))
		for i, k := range keys {
			ns[i] = k.(int64)
		}
		s.queued = append(s.queued, queuedQuery{prefetchDedupePG, []any{from, pgInt8Array(ns)}, scan})
		return found
	}
	for len(keys) > 0 {
		n := chunk(len(keys))
		s.queued = append(s.queued, queuedQuery{prefetchDedupeStmts[n], append([]any{from}, keys[:n]...), scan})
		keys = keys[n:]
	}
	return found
}

// storedEvents scans stored events into found.
func storedEvents(found map[[2]string]storedEvent) func(*sql.Rows) error {
	return func(rows *sql.Rows) error {
		var key int64
		var task, hash string
		var e storedEvent
		if err := rows.Scan(&key, &task, &hash, &e.id, &e.receivedAt); err != nil {
			return err
		}
		// The key is compact, not unique: the row's task and hash decide.
		k := [2]string{task, hash}
		if prev, ok := found[k]; !ok || e.receivedAt > prev.receivedAt || (e.receivedAt == prev.receivedAt && e.id > prev.id) {
			found[k] = e
		}
		return nil
	}
}
