package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

func firstToolResult(t *testing.T, evs []sseEvent) map[string]any {
	t.Helper()
	for _, e := range evs {
		if e.Type == "tool.result" {
			return e.Data
		}
	}
	t.Fatalf("no tool.result in %v", types(evs))
	return nil
}

func TestRulesWhatIfAndShadowRules(t *testing.T) {
	e := newE2E(t,
		llmfake.ToolCall("run_command", `{"command":"echo restart","target":"server"}`), llmfake.Text("restarted"),
		llmfake.ToolCall("run_command", `{"command":"echo hello","target":"server"}`), llmfake.Text("said hello"),
		llmfake.ToolCall("run_command", `{"command":"echo goodbye","target":"server"}`), llmfake.Text("refused"),
	)
	c := e.c
	allow := c.must(201, "POST", "/api/rules", map[string]any{"kind": "must_always", "effect": "allow", "description": "echo is harmless",
		"tool": "run_command", "match_type": "glob", "pattern": "echo *"}).JSON()
	never := c.must(201, "POST", "/api/rules", map[string]any{"kind": "must_never", "description": "no goodbyes",
		"tool": "run_command", "match_type": "glob", "pattern": "*goodbye*"}).JSON()
	wantValidation(t, c.do("POST", "/api/rules/shadow", map[string]any{"kind": "must_always", "description": "tell"}), "body", "effect")
	shadow := c.must(201, "POST", "/api/rules/shadow", map[string]any{"kind": "must_never", "description": "never restart",
		"tool": "run_command", "match_type": "glob", "pattern": "*restart*", "trial_days": 3}).JSON()
	if shadow["shadow"] != true || shadow["on_trial"] != true {
		t.Fatalf("shadow rule: %v", shadow)
	}
	// The shadow rule is not a live rule and is not told to the model.
	if got := c.must(200, "GET", "/api/rules", nil).JSON(); got["total"] != float64(2) {
		t.Fatalf("live rules: %v", got)
	}

	// The shadow rule decides nothing: the restart runs under the allow rule.
	_, evs := e.chat(t, "restart the api")
	if res := firstToolResult(t, evs); res["blocked"] == true || !strings.Contains(res["output"].(string), "restart") {
		t.Fatalf("the shadow rule decided: %v", res)
	}
	if strings.Contains(e.fake.Requests()[0].System, "never restart") {
		t.Fatal("a shadow rule is in the system prompt")
	}
	_, evs = e.chat(t, "say hello")
	if res := firstToolResult(t, evs); res["blocked"] == true {
		t.Fatalf("hello: %v", res)
	}
	_, evs = e.chat(t, "say goodbye")
	if res := firstToolResult(t, evs); res["blocked"] != true {
		t.Fatalf("goodbye ran: %v", res)
	}
	// ... but recorded what it would have done, for the restart only.
	got := c.must(200, "GET", "/api/rules/shadow/"+shadow["id"].(string), nil).JSON()
	rec, _ := got["recorded"].([]any)
	if got["hits"] != float64(1) || len(rec) != 1 {
		t.Fatalf("shadow record: %v", got)
	}
	if h := rec[0].(map[string]any); h["actual"] != "allow" || h["would"] != "block" || h["command"] != "echo restart" || h["session_id"] == nil {
		t.Fatalf("shadow hit: %v", h)
	}

	// What-if over the three recorded calls (the session log is written
	// beside the run: wait until all three are stored).
	preview := func(body map[string]any) map[string]any {
		return c.must(200, "POST", "/api/rules/preview", body).JSON()
	}
	org := orgOf(t, c)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		calls, _, err := e.env.DB.FindRecordedCalls(context.Background(), org, c.Project, time.Now().Add(-time.Hour), 10)
		if err != nil || len(calls) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("recorded calls: %d", len(calls))
		}
	}
	p := preview(map[string]any{"days": 1, "add": []map[string]any{{"kind": "must_never", "description": "never restart",
		"tool": "run_command", "match_type": "glob", "pattern": "*restart*"}}})
	changes, _ := p["changes"].([]any)
	if p["calls_replayed"] != float64(3) || p["newly_blocked"] != float64(1) || p["unchanged"] != float64(2) || len(changes) != 1 {
		t.Fatalf("add must_never: %v", p)
	}
	ch := changes[0].(map[string]any)
	if ch["command"] != "echo restart" || ch["before"] != "allow" || ch["after"] != "block" || ch["change"] != "newly_blocked" ||
		ch["rule_ids"].([]any)[0] != "proposed:1" || ch["session_id"] == nil {
		t.Fatalf("change: %v", ch)
	}
	p = preview(map[string]any{"remove": []string{allow["id"].(string)}})
	if p["newly_needing_approval"] != float64(2) || p["unchanged"] != float64(1) {
		t.Fatalf("remove allow: %v", p)
	}
	p = preview(map[string]any{"remove": []string{never["id"].(string)}})
	if p["newly_allowed"] != float64(1) || p["changes"].([]any)[0].(map[string]any)["command"] != "echo goodbye" {
		t.Fatalf("remove must_never: %v", p)
	}
	wantValidation(t, c.do("POST", "/api/rules/preview", map[string]any{"add": []map[string]any{{"kind": "must_never", "description": "x",
		"match_type": "regex", "pattern": "("}}}), "body", "add", 0, "pattern")
	wantValidation(t, c.do("POST", "/api/rules/preview", map[string]any{"remove": []string{"nope"}}), "body", "remove", 0)
	wantValidation(t, c.do("POST", "/api/rules/preview", map[string]any{"days": 91}), "body", "days")
	// Nothing was saved by the previews.
	if got := c.must(200, "GET", "/api/rules", nil).JSON(); got["total"] != float64(2) {
		t.Fatalf("rules after previews: %v", got)
	}

	// Promote: the shadow becomes a live rule and now blocks.
	live := c.must(201, "POST", "/api/rules/shadow/"+shadow["id"].(string)+"/promote", nil).JSON()
	if live["kind"] != "must_never" || live["effect"] != "block" {
		t.Fatalf("promoted: %v", live)
	}
	c.must(404, "GET", "/api/rules/shadow/"+shadow["id"].(string), nil)
	if v := evaluate(t, c, "run_command", map[string]any{"command": "echo restart"})["verdict"]; v != "block" {
		t.Fatalf("after promotion: %v", v)
	}
}
