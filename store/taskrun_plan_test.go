package store

import (
	"context"
	"strings"
	"testing"
)

// The active-run check seeks the partial index of active sessions instead
// of walking every session of the task (a webhook records one per alert).
func TestActiveRunCheckSeeksItsIndex(t *testing.T) {
	db, _ := openTemp(t)
	if SessionPending != "pending" || SessionRunning != "running" {
		t.Fatal("queryTaskActiveRun spells the active statuses literally; update it")
	}
	rows, err := db.w.QueryContext(context.Background(), `EXPLAIN QUERY PLAN `+queryTaskActiveRun, "t")
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
	if got := strings.Join(plan, "; "); !strings.Contains(got, "agent_sessions_task_active") {
		t.Fatalf("active-run plan: %q, want the partial index agent_sessions_task_active", got)
	}
}
