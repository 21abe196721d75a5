package server_test

import (
	"math"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// A whole chat over SSE against the fake LLM: deltas in order, a knowledge
// tool call, the stored session with tokens and cost, a reconnect that
// replays what was missed, and a resume that continues with the history.
func TestChatOverSSE(t *testing.T) {
	t.Parallel()
	fake := llmfake.New(t,
		llmfake.ToolCall("search_knowledge", `{"query":"disk full","collection":"runbooks"}`).WithUsage(100, 20),
		llmfake.Text("The runbook says: clean /var/log on web-1, then check again.").WithUsage(200, 30),
	)
	env := newEnv(t, withLLM(fake))
	c := env.register("chat@example.com")
	withProject(t, env, c)
	c.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": "disk.md",
		"content": "# Disk full\n\nWhen the disk is full, clean /var/log first."})

	res, evs := c.stream("POST", "/api/chat", map[string]any{"message": "Disk is full on web-1.\nWhat do I do?", "name": "disk-chat"}, 0, nil)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("chat: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	sid := res.Header.Get("X-Session-ID")
	if evs[0].Type != "session" || evs[0].Data["session_id"] != sid || evs[len(evs)-1].Type != "done" {
		t.Fatalf("stream must open with session and end with done: %v", types(evs))
	}
	for i, e := range evs {
		if e.ID != int64(i+1) {
			t.Fatalf("event %d has id %d; ids must count from 1 without gaps", i, e.ID)
		}
	}
	var text strings.Builder
	deltas := 0
	for _, e := range evs {
		if e.Type == "message.delta" && e.Data["step"].(float64) == 2 {
			text.WriteString(e.Data["text"].(string))
			deltas++
		}
	}
	final := lastOf(t, evs, "message").Data["content"].(string)
	if deltas < 3 || text.String() != final {
		t.Fatalf("%d deltas joined to %q, want the final message %q", deltas, text.String(), final)
	}
	call := lastOf(t, evs, "tool.call")
	result := lastOf(t, evs, "tool.result")
	if call.Data["name"] != "search_knowledge" || result.Data["is_error"] != false || !strings.Contains(result.Data["output"].(string), "clean /var/log") {
		t.Fatalf("tool call %v -> %v", call.Data, result.Data)
	}
	if call.ID > result.ID {
		t.Fatal("tool.result before tool.call")
	}
	done := lastOf(t, evs, "done")
	if done.Data["status"] != "completed" || done.Data["session_cost"].(float64) <= 0 {
		t.Fatalf("done: %v", done.Data)
	}

	// The stored session.
	d := c.must(200, "GET", "/api/sessions/detail/"+sid, nil).JSON()
	wantCost := (300*1000.0 + 50*2000.0) / 1e6
	if d["status"] != "completed" || d["reason"] != "" || d["tokens_in"].(float64) != 300 || d["tokens_out"].(float64) != 50 ||
		math.Abs(d["cost"].(float64)-wantCost) > 1e-9 || d["title"] != "Disk is full on web-1." || d["source"] != "webchat" ||
		d["trigger_source"] != "web" || d["tool_calls"].(float64) != 1 || d["steps"].(float64) != 2 ||
		!strings.Contains(d["summary"].(string), "clean /var/log") || d["model"] != llmfake.Model {
		t.Fatalf("stored session: %v", d)
	}
	tr := c.must(200, "GET", "/api/sessions/"+sid+"/transcript", nil).JSON()
	if msgs := tr["messages"].([]any); len(msgs) != 4 || !strings.Contains(msgs[2].(map[string]any)["content"].(string), "clean /var/log") {
		t.Fatalf("transcript: %v", tr)
	}

	// A viewer that saw up to event 3 reconnects and gets exactly the rest.
	_, replay := c.stream("GET", "/api/sessions/"+sid+"/events", nil, 3, nil)
	if len(replay) != len(evs)-3 {
		t.Fatalf("replay after 3: %d events, want %d", len(replay), len(evs)-3)
	}
	for i, e := range replay {
		if want := evs[i+3]; e.ID != want.ID || e.Type != want.Type {
			t.Fatalf("replayed event %d: %d %s, want %d %s", i, e.ID, e.Type, want.ID, want.Type)
		}
	}

	// Resume by name continues the conversation with its history.
	fake.Add(llmfake.Text("Then rotate the logs weekly.").WithUsage(400, 10))
	c.Header.Set("Idempotency-Key", "resume-1")
	r := c.must(202, "POST", "/api/sessions/disk-chat/resume", map[string]any{"prompt": "And after that?"}).JSON()
	first := int64(r["first_event_id"].(float64))
	if r["session_id"] != sid || r["turn"].(float64) != 2 || first != int64(len(evs)+1) || r["replayed"] != false {
		t.Fatalf("resume: %v", r)
	}
	again := c.must(202, "POST", "/api/sessions/"+sid+"/resume", map[string]any{"prompt": "And after that?"}).JSON()
	if again["replayed"] != true || again["first_event_id"] != r["first_event_id"] {
		t.Fatalf("same Idempotency-Key must answer the same turn: %v", again)
	}
	c.Header.Del("Idempotency-Key")
	_, turn2 := c.stream("GET", "/api/sessions/"+sid+"/events", nil, first-1, nil)
	if turn2[0].Type != "session" || turn2[0].ID != first || lastOf(t, turn2, "done").Data["status"] != "completed" {
		t.Fatalf("second turn: %v", types(turn2))
	}
	reqs := fake.Requests()
	body := string(reqs[len(reqs)-1].Body)
	for _, want := range []string{"Disk is full on web-1.", "clean /var/log", "And after that?"} {
		if !strings.Contains(body, want) {
			t.Fatalf("the resumed request lacks %q of the history: %s", want, body)
		}
	}
	if fake.Remaining() != 0 {
		t.Fatalf("%d scripted turns unused (a replayed resume must not run again)", fake.Remaining())
	}
	d = c.must(200, "GET", "/api/sessions/detail/"+sid, nil).JSON()
	if d["turns"].(float64) != 2 || d["tokens_in"].(float64) != 700 || d["summary"] != "Then rotate the logs weekly." {
		t.Fatalf("after resume: %v", d)
	}
}
