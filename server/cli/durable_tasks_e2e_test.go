package cli_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// Task runs survive restarts like chat turns (issue 34: "scheduled and
// webhook-started runs behave the same way"), on the built binary: one run,
// one result, the command run once.

// markScript writes an executable that appends a line to marker and then
// takes a while: a change-capable command the test can cut mid-run. Its
// line has no shell control characters, so a pre-approval rule lets the
// run call it without a person.
func markScript(t *testing.T, marker string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mark-cleanup")
	body := "#!/bin/sh\necho ran >> " + marker + "\nsleep 4\n"
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// allowCommands pre-approves run_command for the user's project.
func allowCommands(s *srv, u *user) {
	s.must(201, "POST", "/api/rules", u.token, u.project, map[string]any{"kind": "must_always", "effect": "allow",
		"description": "the cleanup runs without asking", "tool": "run_command", "match_type": "glob", "pattern": "*"})
}

// waitMarker waits until the command has started (its marker has a line).
func waitMarker(t *testing.T, marker string) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); markerLines(t, marker) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the command never started")
		}
	}
}

// taskRuns lists the sessions of one task.
func taskRuns(t *testing.T, s *srv, u *user, taskID string) []map[string]any {
	t.Helper()
	page := s.must(200, "GET", "/api/sessions/index?source=task&limit=200", u.token, u.project, nil)
	var all []map[string]any
	for _, item := range page["items"].([]any) {
		if it := item.(map[string]any); it["task_id"] == taskID {
			all = append(all, it)
		}
	}
	return all
}

// checkOneResult: the task has exactly one run, completed, and the task
// says so; the model was told the cut call's outcome is unknown; the
// stream shows run.resumed and every event once.
func checkOneResult(t *testing.T, s *srv, u *user, taskID, sid, marker string, interrupted bool) {
	t.Helper()
	waitSession(t, s, u, sid, "completed")
	time.Sleep(500 * time.Millisecond) // a second run or resume, were there one, would have started by now
	if n := markerLines(t, marker); n != 1 {
		t.Fatalf("the command ran %d times, want exactly once", n)
	}
	if runs := taskRuns(t, s, u, taskID); len(runs) != 1 || runs[0]["status"] != "completed" {
		t.Fatalf("the task's runs: %v, want one, completed", runs)
	}
	task := s.must(200, "GET", "/api/tasks/"+taskID, u.token, u.project, nil)
	if task["last_status"] != "completed" || task["last_session_id"] != sid {
		t.Fatalf("the task's last run: %v", task)
	}
	reqs := s.fake.Requests()
	results := reqs[len(reqs)-1].ToolResults()
	told := len(results) == 1 && strings.Contains(results[0].Content, "interrupted; outcome unknown: check before retrying")
	if told != interrupted {
		t.Fatalf("the model's last tool result (interrupted: want %v): %+v", interrupted, results)
	}
	evs := sessionEvents(t, s, u, sid)
	checkOnce(t, evs)
	if !hasEvent(evs, "run.resumed") {
		t.Fatalf("the run does not show it resumed: %v", evs)
	}
	dones := 0
	for _, ev := range evs {
		if ev.Type == "done" {
			dones++
		}
	}
	if dones != 1 {
		t.Fatalf("%d done events, want one", dones)
	}
}

// webhookTask creates a task with an Alertmanager webhook and delivers one
// alert to it, which starts a run; it returns the task's id.
func webhookTask(t *testing.T, s *srv, u *user) string {
	t.Helper()
	task := s.must(201, "POST", "/api/tasks", u.token, u.project, map[string]any{"name": "disk alerts", "prompt": "Clean the cache"})
	id := task["id"].(string)
	const secret = "whtok_durable_test_secret_0123456789"
	s.must(200, "PUT", "/api/tasks/"+id+"/webhook", u.token, u.project, map[string]any{"provider": "alertmanager", "secret": secret})
	req, _ := http.NewRequest("POST", s.URL+"/api/webhooks/"+id, bytes.NewReader(alertmanagerDeliveries(t)[0]))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secret)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		t.Fatalf("delivery: %d", res.StatusCode)
	}
	return id
}

// kill -9 while a webhook-started run's command runs: after the restart the
// same run goes on from its checkpoint, the command is not run again (the
// model is told its outcome is unknown), and the run ends once: one
// completed session, the incident still pointing at it, the task's last
// run completed.
func TestKillDuringAWebhookRunResumesIt(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "marker")
	s := startServer(t,
		llmfake.ToolCall("run_command", `{"command":"`+markScript(t, marker)+`","target":"server"}`),
		llmfake.Text("The cleanup may have run; I checked before trying again."),
	)
	u := s.newUser("oncall@example.com")
	allowCommands(s, u)
	id := webhookTask(t, s, u)
	waitMarker(t, marker)
	sid, _ := s.must(200, "GET", "/api/tasks/"+id, u.token, u.project, nil)["last_session_id"].(string)
	if sid == "" {
		t.Fatal("the webhook run has no session")
	}
	s.proc.Kill()
	s.start(s.addr)
	checkOneResult(t, s, u, id, sid, marker, true)
	sess := s.must(200, "GET", "/api/sessions/detail/"+sid, u.token, u.project, nil)
	if sess["trigger_source"] != "webhook" {
		t.Fatalf("the run's trigger: %v", sess["trigger_source"])
	}
	incidents := s.must(200, "GET", "/api/incidents", u.token, u.project, nil)["items"].([]any)
	if len(incidents) != 1 || incidents[0].(map[string]any)["session_id"] != sid {
		t.Fatalf("the incident does not point at the one run %s: %v", sid, incidents)
	}
}

// SIGTERM while a scheduled (cron) run's command runs: the run is
// checkpointed once the command's result is in, the server exits, and after
// the restart the run goes on from there (the model gets the result; the
// command is not run again) and completes once.
func TestSigtermDuringAScheduledRunResumesIt(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "marker")
	clock := filepath.Join(t.TempDir(), "clock")
	if err := os.WriteFile(clock, []byte("0s"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServerWith(t, []string{"OPSAGENT_TEST_SCHEDULER_CLOCK=" + clock},
		llmfake.ToolCall("run_command", `{"command":"`+markScript(t, marker)+`","target":"server"}`),
		llmfake.Text("The nightly cleanup ran."),
	)
	u := s.newUser("oncall@example.com")
	allowCommands(s, u)
	task := s.must(201, "POST", "/api/tasks", u.token, u.project, map[string]any{"name": "nightly cleanup",
		"prompt": "Clean the cache", "schedule": "*/5 * * * *", "timezone": "UTC"})
	id := task["id"].(string)
	next, err := time.Parse(time.RFC3339, task["next_run_at"].(string))
	if err != nil {
		t.Fatalf("next_run_at: %v (%v)", task["next_run_at"], err)
	}
	// The scheduler's clock jumps to just past the next fire.
	ahead := time.Until(next) + time.Second
	if err := os.WriteFile(clock, []byte(ahead.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	waitMarker(t, marker)
	sid, _ := s.must(200, "GET", "/api/tasks/"+id, u.token, u.project, nil)["last_session_id"].(string)
	if sid == "" {
		t.Fatal("the scheduled run has no session")
	}
	s.proc.Stop() // SIGTERM; the grace (20 s) outlasts the command
	if n := markerLines(t, marker); n != 1 {
		t.Fatalf("the command ran %d times before the restart", n)
	}
	s.start(s.addr)
	checkOneResult(t, s, u, id, sid, marker, false)
	sess := s.must(200, "GET", "/api/sessions/detail/"+sid, u.token, u.project, nil)
	if sess["trigger_source"] != "scheduled" {
		t.Fatalf("the run's trigger: %v", sess["trigger_source"])
	}
	reqs := s.fake.Requests()
	results := reqs[len(reqs)-1].ToolResults()
	if len(results) != 1 || strings.Contains(results[0].Content, "interrupted") {
		t.Fatalf("the model did not get the command's result: %+v", results)
	}
}
