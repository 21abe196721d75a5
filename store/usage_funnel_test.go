package store

import (
	"context"
	"testing"
	"time"
)

// The funnel's sums run on both engines (PostgreSQL has no SUM(boolean):
// the dashboard's stats answered 500 there) and count each stage.
func TestFunnelCountsStagesOnBothEngines(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	org, projects := seedOrg(t, db, "funnel", "p")
	now := TS(time.Now())
	for _, s := range []struct {
		status             string
		started            bool
		tools, approvals   int
		waitingForApproval int
	}{
		{"completed", true, 2, 1, 0},
		{"running", true, 1, 1, 1},
		{"running", true, 0, 0, 0},
		{"pending", false, 0, 0, 0},
		{"failed", true, 0, 0, 0},
		{"cancelled", false, 0, 0, 0},
	} {
		var started any
		if s.started {
			started = now
		}
		if _, err := db.w.ExecContext(ctx, `INSERT INTO agent_sessions (id, org_id, project_id, source, trigger_source, status,
			started_at, tool_calls, approvals, waiting_approval, last_activity, created_at, updated_at)
			VALUES (?, ?, ?, 'webchat', 'web', ?, ?, ?, ?, ?, ?, ?, ?)`, NewID(), org, projects[0], s.status, started,
			s.tools, s.approvals, s.waitingForApproval, now, now, now); err != nil {
			t.Fatal(err)
		}
	}
	f, err := db.Funnel(ctx, UsageScope{OrgID: org, ProjectIDs: projects})
	if err != nil {
		t.Fatal(err)
	}
	want := SessionFunnel{Created: 6, Started: 4, UsedTools: 2, NeededApproval: 2, Running: 2, WaitingApproval: 1,
		Pending: 1, Completed: 1, Failed: 1, Cancelled: 1}
	f.LastActivity = nil
	if f != want {
		t.Fatalf("funnel %+v, want %+v", f, want)
	}
}
