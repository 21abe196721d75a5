package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// e2e is one server with the fake LLM and local commands allowed.
type e2e struct {
	env  *testEnv
	fake *llmfake.Server
	c    *client
	work string // the project's working directory for local commands
}

func newE2E(t *testing.T, turns ...llmfake.Turn) *e2e {
	t.Helper()
	fake := llmfake.New(t, turns...)
	env := newEnv(t, withLLM(fake), allowLocal)
	c := env.register("oncall@example.com")
	withProject(t, env, c)
	return &e2e{env: env, fake: fake, c: c, work: filepath.Join(env.Dir, "work", c.Project)}
}

// chat starts a session and reads its first turn's stream to the end.
func (e *e2e) chat(t *testing.T, message string) (string, []sseEvent) {
	t.Helper()
	res, evs := e.c.stream("POST", "/api/chat", map[string]any{"message": message}, 0, nil)
	if res.StatusCode != 200 {
		t.Fatalf("chat: %d", res.StatusCode)
	}
	if len(evs) == 0 || evs[len(evs)-1].Type != "done" {
		t.Fatalf("chat stream must end with done: %v", types(evs))
	}
	return res.Header.Get("X-Session-ID"), evs
}

// watch follows a session's events after lastID until a done event.
func (e *e2e) watch(t *testing.T, sid string, lastID int64) []sseEvent {
	t.Helper()
	res, evs := e.c.stream("GET", "/api/sessions/"+sid+"/events", nil, lastID,
		func(ev sseEvent) bool { return ev.Type == "done" })
	if res.StatusCode != 200 {
		t.Fatalf("events: %d", res.StatusCode)
	}
	if len(evs) == 0 || evs[0].ID != lastID+1 || evs[len(evs)-1].Type != "done" {
		t.Fatalf("events after %d: %v\n%s", lastID, types(evs), e.env.Logs.String())
	}
	return evs
}

// waitingApproval checks the end of a turn that stopped for a person: the
// stream carries approval.required with an approval id, the session waits,
// and the approval is listed pending with the exact rendered command.
func (e *e2e) waitingApproval(t *testing.T, sid string, evs []sseEvent, command string) string {
	t.Helper()
	if done := lastOf(t, evs, "done"); done.Data["waiting_approval"] != true || done.Data["status"] != "running" {
		t.Fatalf("done of a waiting turn: %v", done.Data)
	}
	return e.waitingApprovalOf(t, sid, lastOf(t, evs, "approval.required"), command)
}

// waitingApprovalOf checks an approval.required event against the session
// and the pending approval it names, and returns the approval's id.
func (e *e2e) waitingApprovalOf(t *testing.T, sid string, ar sseEvent, command string) string {
	t.Helper()
	id, _ := ar.Data["approval_id"].(string)
	if id == "" || ar.Data["name"] != "run_command" {
		t.Fatalf("approval.required: %v", ar.Data)
	}
	d := e.c.must(200, "GET", "/api/sessions/detail/"+sid, nil).JSON()
	if d["status"] != "running" || d["waiting_approval"] != true {
		t.Fatalf("session while waiting: %v", d)
	}
	page := e.c.must(200, "GET", "/api/approvals?status=pending&kind=tool_call", nil).JSON()
	items := page["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("pending approvals: %v", page)
	}
	item := items[0].(map[string]any)
	subj := item["subject"].(map[string]any)
	if item["id"] != id || item["session_id"] != sid || subj["tool"] != "run_command" || subj["command"] != command ||
		subj["target"] != "server" {
		t.Fatalf("pending approval: %v", item)
	}
	return id
}

// runs counts the lines a command appended to a file of the work dir.
func (e *e2e) runs(name string) int {
	b, err := os.ReadFile(filepath.Join(e.work, name))
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "\n")
}

// toolResultsSent are the tool results the model was sent in request i.
func (e *e2e) toolResultsSent(t *testing.T, i int) []llmfake.Message {
	t.Helper()
	reqs := e.fake.Requests()
	if i >= len(reqs) {
		t.Fatalf("the model got %d requests, want at least %d", len(reqs), i+1)
	}
	return reqs[i].ToolResults()
}

const echoHello = `echo hello >> hello.log && cat hello.log`

// blockedTwice checks a turn where the model called run_command twice and
// the rule refused both: two blocked results that name the rule, a model
// told why each time, and a completed session.
func (e *e2e) blockedTwice(t *testing.T, sid string, evs []sseEvent, rule string, firstReq int) {
	t.Helper()
	var blocked []sseEvent
	for _, ev := range evs {
		if ev.Type == "tool.result" {
			blocked = append(blocked, ev)
		}
	}
	if len(blocked) != 2 {
		t.Fatalf("tool results: %v", types(evs))
	}
	for _, r := range blocked {
		if r.Data["blocked"] != true || r.Data["is_error"] != true || !strings.Contains(r.Data["output"].(string), rule) {
			t.Fatalf("a must_never call was not blocked with its reason: %v", r.Data)
		}
	}
	for _, ev := range evs {
		if ev.Type == "approval.required" {
			t.Fatalf("a must_never call asked for approval: %v", ev.Data)
		}
	}
	if done := lastOf(t, evs, "done"); done.Data["status"] != "completed" {
		t.Fatalf("done: %v", done.Data)
	}
	for i := firstReq + 1; i <= firstReq+2; i++ {
		sent := e.toolResultsSent(t, i)
		if got := sent[len(sent)-1]; !strings.Contains(got.Content, "refused and did not run") || !strings.Contains(got.Content, rule) {
			t.Fatalf("request %d told the model %+v", i, got)
		}
	}
	if n := len(e.c.must(200, "GET", "/api/approvals?session_id="+sid, nil).JSON()["items"].([]any)); n != 0 {
		t.Fatalf("%d approvals opened for blocked calls", n)
	}
}

// rawEvents is every event of a session as served, for searching.
func (e *e2e) rawEvents(t *testing.T, sid string) string {
	t.Helper()
	r := e.c.must(200, "GET", "/api/sessions/"+sid+"/events", nil)
	return string(r.Body)
}

// waitTask polls a task until pred holds.
func (e *e2e) waitTask(t *testing.T, id string, pred func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		task := e.c.must(200, "GET", "/api/tasks/"+id, nil).JSON()
		if pred(task) {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task never reached the state: %v", task)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
