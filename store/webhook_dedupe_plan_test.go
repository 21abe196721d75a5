package store

import (
	"context"
	"strings"
	"testing"
)

// The dedupe lookup (a batch's prefetch) must be index seeks on (key,
// time), never a walk of the task's window or a sort. With only
// (task, hash) indexed the planner preferred the task/time index for the
// ORDER BY and walked every event of the window: ingest on default settings
// slowed from 1,160 to 184 events/s within half a minute.
func TestDedupeLookupSeeksItsIndex(t *testing.T) {
	sqliteOnly(t) // SQLite's planner; PostgreSQL plans with statistics
	db, _ := openTemp(t)
	got := queryPlan(t, db, prefetchDedupeStmts[4], "2026-01-01T00:00:00Z", 1, 2, 3, 4)
	if !strings.Contains(got, "webhook_events_dedupe_key (dedupe_key=? AND received_at>?)") ||
		strings.Contains(got, "TEMP B-TREE") {
		t.Fatalf("dedupe plan: got %q, want a seek on webhook_events_dedupe_key over key and time", got)
	}
}

// queryPlan is SQLite's plan of query on the writer connection, its steps
// joined by "; ".
func queryPlan(t *testing.T, db *DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.w.QueryContext(context.Background(), `EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "; ")
}

// The batch's active-run lookup seeks the partial index of active sessions
// per task, as the single-task query does, in the same order.
func TestActiveRunPrefetchSeeksItsIndex(t *testing.T) {
	sqliteOnly(t)
	db, _ := openTemp(t)
	got := queryPlan(t, db, prefetchActiveStmts[4], "a", "b", "c", "d")
	if !strings.Contains(got, "agent_sessions_task_active (task_id=?)") || strings.Contains(got, "TEMP B-TREE") {
		t.Fatalf("active-run plan: got %q, want a seek on agent_sessions_task_active per task", got)
	}
}

// The dedupe memory's rebuild reads one task's window by its (task_id,
// received_at) index, not a walk of every task's events.
func TestDedupeRebuildSeeksTaskIndex(t *testing.T) {
	sqliteOnly(t)
	db, _ := openTemp(t)
	got := queryPlan(t, db, queryDedupeRows, "task", "2026-01-01T00:00:00Z")
	if !strings.Contains(got, "webhook_events_task (task_id=? AND received_at>?)") {
		t.Fatalf("rebuild plan: got %q, want a seek on webhook_events_task over task and time", got)
	}
}
