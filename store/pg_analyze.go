package store

import (
	"context"
	"time"
)

// pgAnalyzeEvery is how often the server looks for tables that outgrew their
// statistics.
const pgAnalyzeEvery = 2 * time.Second

// pgAnalyzeMinRows: a table is analyzed ahead of autovacuum only once this
// many rows changed since its last statistics, and more than it had then.
const pgAnalyzeMinRows = 1000

// The planner costs a statement on the table's statistics; a table without
// any (a fresh database) or with statistics from when it was a tenth of its
// size gets plans for a small table. autovacuum's ANALYZE follows only after
// its naptime (a minute) and 10 % of the rows: an alert storm on a fresh
// database grows incident_keys, agent_sessions and task_runs a
// hundredfold in that minute, and the correlation-key lookup read every key
// of the project (the planner took project_id for selective), 0.3 ms of
// PostgreSQL per event, growing (pg_stat_statements and auto_explain,
// session 6). So each server, every pgAnalyzeEvery, analyzes the tables whose
// changes since their last statistics exceed their rows then (a table that
// at least doubled): about log2(growth) times per table while it grows, not
// at all in a steady state, which autovacuum keeps.
// SKIP_LOCKED: a table another server or autovacuum is analyzing is skipped.
func (db *DB) startPGAnalyzer() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	db.analyzeStop = func() { cancel(); <-done }
	go func() {
		defer close(done)
		t := time.NewTicker(pgAnalyzeEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			db.analyzeGrown(ctx)
		}
	}()
}

func (db *DB) analyzeGrown(ctx context.Context) {
	rows, err := db.locks.QueryContext(ctx, `SELECT quote_ident(s.schemaname) || '.' || quote_ident(s.relname)
		FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
		WHERE s.n_mod_since_analyze >= ? AND s.n_mod_since_analyze > c.reltuples`, pgAnalyzeMinRows)
	if err != nil {
		return // a broken connection or a stopping server: the next tick tries again
	}
	var tables []string
	for rows.Next() {
		var t string
		if rows.Scan(&t) == nil {
			tables = append(tables, t)
		}
	}
	rows.Close()
	for _, t := range tables {
		if _, err := db.locks.ExecContext(ctx, `ANALYZE (SKIP_LOCKED) `+t); err != nil {
			return
		}
	}
}
