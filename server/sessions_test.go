package server_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/store"
)

// chat runs one chat turn to its end and returns the session id.
func chat(t *testing.T, c *client, body map[string]any) (string, []sseEvent) {
	t.Helper()
	res, evs := c.stream("POST", "/api/chat", body, 0, nil)
	if res.StatusCode != 200 {
		t.Fatalf("chat: %d", res.StatusCode)
	}
	return res.Header.Get("X-Session-ID"), evs
}

// waitSession polls a session until pred holds.
func waitSession(t *testing.T, c *client, id string, pred func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		d := c.must(200, "GET", "/api/sessions/detail/"+id, nil).JSON()
		if pred(d) {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("session never reached the state: %v", d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Cancel while the model hangs; the browser that started the chat closed
// long before; several viewers watch; resume of a running session is 409.
func TestSessionCancelViewersAndConflicts(t *testing.T) {
	t.Parallel()
	fake := llmfake.New(t, llmfake.Hang())
	env := newEnv(t, withLLM(fake))
	c := env.register("cancel@example.com")
	withProject(t, env, c)

	// The browser reads the first event and goes away: the run goes on.
	res, first := c.stream("POST", "/api/chat", map[string]any{"message": "tail the logs"}, 0, func(sseEvent) bool { return true })
	sid := res.Header.Get("X-Session-ID")
	if len(first) != 1 || first[0].Type != "session" {
		t.Fatalf("first event: %v", first)
	}
	waitSession(t, c, sid, func(d map[string]any) bool { return d["status"] == "running" })
	r := c.do("POST", "/api/sessions/"+sid+"/resume", map[string]any{"prompt": "more"})
	if r.Status != 409 {
		t.Fatalf("resume of a running session: %d %s", r.Status, r.Body)
	}
	if r := c.do("POST", "/api/chat", map[string]any{"message": "more", "session_id": sid}); r.Status != 409 {
		t.Fatalf("chat into a running session: %d %s", r.Status, r.Body)
	}

	var wg sync.WaitGroup
	views := make([][]sseEvent, 3)
	attached := make(chan struct{}, len(views))
	for i := range views {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			_, views[i] = c.stream("GET", "/api/sessions/"+sid+"/events", nil, 0, func(sseEvent) bool {
				if first {
					first = false
					attached <- struct{}{}
				}
				return false
			})
		}()
	}
	// Every viewer follows the live turn before the cancel: one that has
	// read the run's first event subscribed while it ran.
	for range views {
		select {
		case <-attached:
		case <-time.After(30 * time.Second):
			t.Fatal("a viewer never read the run's first event")
		}
	}
	d := c.must(200, "POST", "/api/sessions/"+sid+"/cancel", nil).JSON()
	if d["status"] != "cancelled" || !strings.Contains(d["reason"].(string), "cancel@example.com") {
		t.Fatalf("cancelled session: %v", d)
	}
	wg.Wait()
	for i, v := range views {
		if len(v) == 0 || v[0].ID != 1 || lastOf(t, v, "error").Data["code"] != "cancelled" || lastOf(t, v, "done").Data["status"] != "cancelled" {
			t.Fatalf("viewer %d saw %v", i, types(v))
		}
	}
	if r := c.do("POST", "/api/sessions/"+sid+"/cancel", nil); r.Status != 409 {
		t.Fatalf("second cancel: %d", r.Status)
	}
}

// Provider failures end the session failed with the reason; no LLM at all
// names the variables to set.
func TestSessionFailures(t *testing.T) {
	t.Parallel()
	fake := llmfake.New(t, llmfake.Error(400))
	env := newEnv(t, withLLM(fake))
	c := env.register("fail@example.com")
	withProject(t, env, c)
	sid, evs := chat(t, c, map[string]any{"message": "hello"})
	if lastOf(t, evs, "error").Data["code"] != "bad_request" {
		t.Fatalf("events: %v", evs)
	}
	d := c.must(200, "GET", "/api/sessions/detail/"+sid, nil).JSON()
	if d["status"] != "failed" || !strings.Contains(d["reason"].(string), "LLM request failed") {
		t.Fatalf("failed session: %v", d)
	}

	bare := newEnv(t)
	b := bare.register("nollm@example.com")
	withProject(t, bare, b)
	sid, evs = chat(t, b, map[string]any{"message": "hello"})
	d = b.must(200, "GET", "/api/sessions/detail/"+sid, nil).JSON()
	if d["status"] != "failed" || !strings.Contains(d["reason"].(string), "OPSAGENT_LLM_PROVIDER") || lastOf(t, evs, "done").Data["status"] != "failed" {
		t.Fatalf("without an LLM: %v", d)
	}
	// Oversized and empty prompts.
	if r := b.do("POST", "/api/chat", map[string]any{"message": strings.Repeat("x", 32001)}); r.Status != 422 {
		t.Fatalf("oversized prompt: %d", r.Status)
	}
	if r := b.do("POST", "/api/chat", strings.Repeat("x", 70<<10)); r.Status != 413 {
		t.Fatalf("oversized body: %d", r.Status)
	}
	wantValidation(t, b.do("POST", "/api/chat", map[string]any{"message": ""}), "body", "message")
}

// Resume: by id or name, 404 when there is nothing to continue, 409 on an
// ambiguous name; nothing of another project shows through.
func TestSessionResumeRefs(t *testing.T) {
	t.Parallel()
	fake := llmfake.New(t, llmfake.Always(llmfake.Text("ok")))
	env := newEnv(t, withLLM(fake), openSignup)
	c := env.register("resume@example.com")
	pid := withProject(t, env, c)
	a, _ := chat(t, c, map[string]any{"message": "one", "name": "twin"})
	chat(t, c, map[string]any{"message": "two", "name": "twin"})
	if r := c.do("POST", "/api/sessions/twin/resume", map[string]any{"prompt": "go on"}); r.Status != 409 || strings.Contains(string(r.Body), a) {
		t.Fatalf("ambiguous name: %d %s", r.Status, r.Body)
	}
	if r := c.do("POST", "/api/sessions/nobody/resume", map[string]any{"prompt": "go on"}); r.Status != 404 {
		t.Fatalf("unknown name: %d", r.Status)
	}
	if r := c.do("POST", "/api/sessions/"+store.NewID()+"/resume", map[string]any{"prompt": "go on"}); r.Status != 404 {
		t.Fatalf("unknown id: %d", r.Status)
	}
	wantValidation(t, c.do("POST", "/api/sessions/"+a+"/resume", map[string]any{}), "body", "prompt")
	// A session that never ran (a pending task run) cannot be resumed.
	s := &store.AgentSession{OrgID: orgOf(t, c), ProjectID: pid, Source: "task", TriggerSource: "manual", Status: store.SessionCompleted}
	if err := env.DB.Write(context.Background(), func(tx *store.Tx) error { return store.CreateAgentSessionTx(context.Background(), tx, s) }); err != nil {
		t.Fatal(err)
	}
	if r := c.do("POST", "/api/sessions/"+s.ID+"/resume", map[string]any{"prompt": "go on"}); r.Status != 404 {
		t.Fatalf("session without transcript: %d %s", r.Status, r.Body)
	}
	r := c.must(202, "POST", "/api/sessions/"+a+"/resume", map[string]any{"prompt": "go on"}).JSON()
	waitSession(t, c, a, func(d map[string]any) bool { return d["status"] == "completed" && d["turns"].(float64) == 2 })
	if r["turn"].(float64) != 2 {
		t.Fatalf("resume: %v", r)
	}
	// Another user's project: the same name is not found.
	o := env.register("other@example.com")
	withProject(t, env, o)
	if r := o.do("POST", "/api/sessions/twin/resume", map[string]any{"prompt": "go on"}); r.Status != 404 {
		t.Fatalf("other tenant by name: %d", r.Status)
	}
}

// A task run goes through the agent: trigger, run, stored with tokens.
func TestTaskRunThroughAgent(t *testing.T) {
	t.Parallel()
	fake := llmfake.New(t, llmfake.Text("All disks below 80%.").WithUsage(1000, 100))
	env := newEnv(t, withLLM(fake))
	c := env.register("taskrun@example.com")
	withProject(t, env, c)
	task := createTask(t, c, map[string]any{"name": "disk check", "prompt": "check the disks"})
	sid := c.must(202, "POST", "/api/tasks/"+task["id"].(string)+"/trigger", nil).JSON()["session_id"].(string)
	d := waitSession(t, c, sid, func(d map[string]any) bool { return d["status"] == "completed" })
	if d["tokens_in"].(float64) != 1000 || d["cost"].(float64) != 1.2 || d["source"] != "task" || d["task_name"] != "disk check" || d["steps"].(float64) != 1 {
		t.Fatalf("task run session: %v", d)
	}
	_, evs := c.stream("GET", "/api/sessions/"+sid+"/events", nil, 0, nil)
	if evs[0].Type != "session" || lastOf(t, evs, "done").Data["status"] != "completed" {
		t.Fatalf("task run events: %v", types(evs))
	}
	if !strings.Contains(string(fake.Requests()[0].Body), "check the disks") {
		t.Fatal("the task prompt did not reach the model")
	}
}
