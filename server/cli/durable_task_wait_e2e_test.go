package cli_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// A task run waiting for an approval survives restarts (issue 34: "an
// approval decided while the run was down is honoured once"; "scheduled
// and webhook-started runs behave the same way"), on the built binary.

// pendingApprovalOf returns the id of session sid's pending approval, "" if none.
func pendingApprovalOf(t *testing.T, s *srv, u *user, sid string) string {
	t.Helper()
	list := s.must(200, "GET", "/api/approvals?status=pending", u.token, u.project, nil)
	for _, it := range list["items"].([]any) {
		if a := it.(map[string]any); a["session_id"] == sid {
			return a["id"].(string)
		}
	}
	return ""
}

// checkStillWaiting: after a restart the run is the same one, still running
// and waiting, its approval still pending (the same one), and the task's
// last run is not failed.
func checkStillWaiting(t *testing.T, s *srv, u *user, taskID, sid, approvalID, marker string) {
	t.Helper()
	time.Sleep(time.Second) // a recovery that failed the run, were there one, would have by now
	sess := s.must(200, "GET", "/api/sessions/detail/"+sid, u.token, u.project, nil)
	if sess["status"] != "running" || sess["waiting_approval"] != true {
		t.Fatalf("after the restart the run is %v (waiting %v, reason %v), want running and waiting",
			sess["status"], sess["waiting_approval"], sess["reason"])
	}
	if got := pendingApprovalOf(t, s, u, sid); got != approvalID {
		t.Fatalf("after the restart the pending approval is %q, want %q", got, approvalID)
	}
	task := s.must(200, "GET", "/api/tasks/"+taskID, u.token, u.project, nil)
	if task["last_status"] == "failed" || task["last_session_id"] != sid {
		t.Fatalf("the task's last run after the restart: %v", task)
	}
	if runs := taskRuns(t, s, u, taskID); len(runs) != 1 {
		t.Fatalf("the task's runs after the restart: %v, want one", runs)
	}
	if n := markerLines(t, marker); n != 0 {
		t.Fatalf("the command ran %d times before it was approved", n)
	}
}

// A webhook-started run stops for an approval of a change-capable command.
// The server gets SIGTERM while it waits, is started again, then is killed
// with -9 and started again: each time the run is still waiting and its
// approval pending. Approved after that, the command runs once and the run
// completes with one result.
func TestTaskRunWaitingForApprovalSurvivesRestarts(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "marker")
	s := startServer(t,
		llmfake.ToolCall("run_command", `{"command":"`+markScript(t, marker)+`","target":"server"}`),
		llmfake.Text("The cleanup ran."),
	)
	u := s.newUser("oncall@example.com")
	id := webhookTask(t, s, u) // no pre-approval rule: the command waits for a person
	var sid, approvalID string
	for end := time.Now().Add(30 * time.Second); approvalID == ""; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the run never asked for an approval")
		}
		if sid == "" {
			sid, _ = s.must(200, "GET", "/api/tasks/"+id, u.token, u.project, nil)["last_session_id"].(string)
		}
		if sid != "" {
			approvalID = pendingApprovalOf(t, s, u, sid)
		}
	}
	s.proc.Stop() // SIGTERM while the run waits
	s.start(s.addr)
	checkStillWaiting(t, s, u, id, sid, approvalID, marker)
	s.proc.Kill() // kill -9 while the resumed run waits
	s.start(s.addr)
	checkStillWaiting(t, s, u, id, sid, approvalID, marker)
	approveOnly(t, s, u, sid)
	checkOneResult(t, s, u, id, sid, marker, false)
}
