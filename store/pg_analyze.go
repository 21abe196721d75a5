package store

import (
	"context"
	"strconv"
	"time"
)

// pgAnalyzeEvery is how often the server looks for tables that outgrew their
// statistics.
const pgAnalyzeEvery = 2 * time.Second

// pgAnalyzeMinRows: a table is analyzed ahead of autovacuum once it has this
// many rows and more than twice the rows of its statistics.
const pgAnalyzeMinRows = 1000

// pgAnalyzeTarget is the statistics target of these analyses: a sample of
// 300 x 10 = 3,000 rows instead of the default's 30,000. The plans they are
// for choose between an index and a scan on row counts and distinct values,
// which a small sample gives; autovacuum's own ANALYZE, which this does not
// delay, brings the full statistics. An alert storm on a fresh database ran
// six analyses per growing table in its first minute, each reading up to
// 30,000 rows: 8 % of the PostgreSQL CPU of the ingest bench's first 20 s.
const pgAnalyzeTarget = 10

// The planner costs a statement on the table's statistics; a table without
// any (a fresh database) or with statistics from when it was a tenth of its
// size gets plans for a small table, and every session keeps its cached
// generic plan until the statistics change. autovacuum's ANALYZE follows
// only after its naptime (a minute) and 10 % of the rows: an alert storm on
// a fresh database grows incident_keys, agent_sessions and task_runs a
// hundredfold in that minute, and the correlation-key lookup read every key
// of the project (the planner took project_id for selective): 0.3 ms of
// PostgreSQL per event, growing (pg_stat_statements and auto_explain,
// session 6). So each server, every pgAnalyzeEvery, analyzes the tables that
// more than doubled since their statistics: log2(growth) times per table
// while it grows, never in a steady state (autovacuum's). Only the indexed
// columns (the plans' choices of index; the rest keep what they had until
// autovacuum's full ANALYZE, which this does not delay: a partial ANALYZE
// leaves the modification count autovacuum reads), on a small sample
// (pgAnalyzeTarget). SKIP_LOCKED: a table another server or autovacuum is
// analyzing is skipped.
func (db *DB) startPGAnalyzer() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	db.analyzeStop = func() { cancel(); <-done }
	db.analyzeKick = make(chan struct{}, 1)
	go func() {
		defer close(done)
		t := time.NewTicker(pgAnalyzeEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-db.analyzeKick:
				db.analyzeFresh(ctx)
			case <-t.C:
			}
			db.analyzeGrown(ctx)
		}
	}()
}

// The first analysis of a fresh database's ingest tables is not left to
// the tick. Until it, the writer's generic plans are costed on tables
// without statistics: the key prefetch then read every open incident of
// the project through incidents_project (auto_explain: "Rows Removed by
// Filter: 2570", 6 ms a batch, growing with the table), and the dedupe
// prefetch scanned the window's events. An alert storm stores the first
// pgAnalyzeMinRows events in a fraction of a second; the tick then came up
// to pgAnalyzeEvery later, and found the rows only once the backend's
// statistics (n_live_tup, sent at most once a second) showed them. So the
// ingest wakes the keeper once, when it has stored pgAnalyzeMinRows events
// since the open (noteIngested), and the keeper analyzes the tables the
// ingest's lookups read that were never analyzed, whatever n_live_tup says.
// A database that has statistics (any restart after the first minutes)
// finds nothing to do.
var pgIngestTables = []string{"webhook_events", "incidents", "incident_keys"}

// noteIngested counts the deliveries the ingest handled (see above).
func (db *DB) noteIngested(n int) {
	if db.analyzeKick == nil || n <= 0 {
		return
	}
	if v := db.ingested.Add(int64(n)); v >= pgAnalyzeMinRows && v-int64(n) < pgAnalyzeMinRows {
		select {
		case db.analyzeKick <- struct{}{}:
		default:
		}
	}
}

// analyzeFresh analyzes the ingest tables that have no statistics yet.
func (db *DB) analyzeFresh(ctx context.Context) {
	db.analyzeWhere(ctx, `c.reltuples < 0 AND s.relname = ANY (?::text[])`, pgTextArray(pgIngestTables))
}

func (db *DB) analyzeGrown(ctx context.Context) {
	db.analyzeWhere(ctx, `s.n_live_tup >= ? AND s.n_live_tup > 2 * c.reltuples`, pgAnalyzeMinRows)
}

// analyzeWhere analyzes the tables where says (pg_stat_user_tables s,
// pg_class c), their indexed columns on a small sample (above).
func (db *DB) analyzeWhere(ctx context.Context, where string, args ...any) {
	rows, err := db.locks.QueryContext(ctx, `SELECT quote_ident(s.schemaname) || '.' || quote_ident(s.relname),
		COALESCE((SELECT string_agg(DISTINCT quote_ident(a.attname), ', ') FROM pg_index i
			JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey) WHERE i.indrelid = s.relid), '')
		FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
		WHERE `+where, args...)
	if err != nil {
		return // a broken connection or a stopping server: the next tick tries again
	}
	var stmts []string
	for rows.Next() {
		var table, cols string
		if rows.Scan(&table, &cols) == nil {
			if cols != "" {
				table += " (" + cols + ")"
			}
			// One simple-protocol string runs as one implicit transaction,
			// so SET LOCAL holds for this ANALYZE only.
			stmts = append(stmts, `SET LOCAL default_statistics_target = `+strconv.Itoa(pgAnalyzeTarget)+
				`; ANALYZE (SKIP_LOCKED) `+table)
		}
	}
	rows.Close()
	for _, q := range stmts {
		if _, err := db.locks.ExecContext(ctx, q); err != nil {
			return
		}
	}
}
