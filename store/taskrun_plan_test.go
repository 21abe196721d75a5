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

// The sweeps of runs left running seek the partial index of running
// sessions (migration 0154), not a scan of every session.
func TestRunningSweepsSeekTheirIndex(t *testing.T) {
	sqliteOnly(t) // SQLite's planner; PostgreSQL plans with statistics
	db, _ := openTemp(t)
	if SessionRunning != "running" {
		t.Fatal("the sweeps spell the running status literally; update them")
	}
	for name, q := range map[string]string{"interrupted runs": queryInterruptedRuns,
		"orphaned runs": queryOrphanedRuns, "orphaned chats": queryOrphanedChats} {
		args := []any{"2026-01-01T00:00:00Z"}
		if q == queryInterruptedRuns {
			args = nil
		}
		if got := queryPlan(t, db, q, args...); !strings.Contains(got, "agent_sessions_running") {
			t.Fatalf("%s plan: %q, want the partial index agent_sessions_running", name, got)
		}
	}
}
