package store

import (
	"strings"
	"testing"
)

// The active-run check seeks the partial index of active sessions instead
// of walking every session of the task (a webhook records one per alert).
func TestActiveRunCheckSeeksItsIndex(t *testing.T) {
	sqliteOnly(t) // SQLite's planner; PostgreSQL plans with statistics
	db, _ := openTemp(t)
	if SessionPending != "pending" || SessionRunning != "running" {
		t.Fatal("queryTaskActiveRun spells the active statuses literally; update it")
	}
	if got := queryPlan(t, db, queryTaskActiveRun, "t"); !strings.Contains(got, "agent_sessions_task_active") {
		t.Fatalf("active-run plan: %q, want the partial index agent_sessions_task_active", got)
	}
}
