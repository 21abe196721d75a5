package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// TestFailoverToSecondModelShowsWhoAnswered: the primary answers 503 to
// everything; the org's fallback (another base URL) answers. The run
// completes, the session's events say a failover happened and which model
// wrote each step, and the org's settings and dashboard count it.
func TestFailoverToSecondModelShowsWhoAnswered(t *testing.T) {
	t.Parallel()
	primary := llmfake.New(t, llmfake.Always(llmfake.Error(503)))
	second := llmfake.New(t,
		llmfake.ToolCall("search_knowledge", `{"query":"disk full"}`).WithUsage(100, 20),
		llmfake.Text("Clean /var/log on web-1.").WithUsage(200, 30),
	)
	env := newEnv(t, withLLM(primary))
	c := env.register("failover@example.com")
	withProject(t, env, c)
	org := c.orgOf()
	c.must(200, "PUT", "/api/organizations/"+org+"/model-settings", map[string]any{
		"context_window": 0, "answer_reserve": 0, "text_tool_calls": "auto",
		"fallbacks": []map[string]any{{"provider": "openai", "base_url": second.BaseURL(llm.ProviderOpenAI),
			"model": "backup-model", "api_key": "sk-backup-123"}},
	})
	_, evs := c.stream("POST", "/api/chat", map[string]any{"message": "Disk is full on web-1", "name": "failover"}, 0, nil)
	if done := lastOf(t, evs, "done"); done.Data["status"] != "completed" {
		t.Fatalf("done: %v", done.Data)
	}
	var failovers, byBackup int
	for _, e := range evs {
		switch e.Type {
		case "model.failover":
			failovers++
			if e.Data["from"] != llmfake.Model || e.Data["to"] != "backup-model" || e.Data["class"] != "server" {
				t.Errorf("failover event %v", e.Data)
			}
		case "message":
			if e.Data["model"] == "backup-model" {
				byBackup++
			}
		}
	}
	if failovers != 2 || byBackup != 2 {
		t.Errorf("%d failovers and %d messages by backup-model, want 2 and 2 (one per step)", failovers, byBackup)
	}
	if n := len(primary.Requests()); n != 4 {
		t.Errorf("primary asked %d times, want 2 attempts per step before failing over", n)
	}
	if got := second.Requests()[0].Header.Get("Authorization"); got != "Bearer sk-backup-123" {
		t.Errorf("fallback called with %q, want its own key", got)
	}
	s := c.must(200, "GET", "/api/organizations/"+org+"/model-settings", nil).JSON()
	if s["failovers_24h"].(float64) != 2 {
		t.Errorf("settings failovers_24h = %v, want 2", s["failovers_24h"])
	}
	fb := s["fallbacks"].([]any)[0].(map[string]any)
	if fb["model"] != "backup-model" || fb["has_api_key"] != true || strings.Contains(string(c.must(200, "GET", "/api/organizations/"+org+"/model-settings", nil).Body), "sk-backup") {
		t.Errorf("fallback out = %v (the key must never be shown)", fb)
	}
	if d := c.must(200, "GET", "/api/dashboard/org-summary", nil).JSON(); d["failovers_24h"].(float64) != 2 {
		t.Errorf("dashboard failovers_24h = %v, want 2", d["failovers_24h"])
	}
}

// TestModelSettingsRefuseWindowsTooSmall: a window that cannot hold the
// system prompt, the tools and the reserve is refused with 422 on save,
// for the primary and for each fallback; other tenants see 404, members
// cannot write.
func TestModelSettingsRefuseWindowsTooSmall(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	c := env.register("window@example.com")
	org := c.orgOf()
	path := "/api/organizations/" + org + "/model-settings"
	floor := int(c.must(200, "GET", path, nil).JSON()["prompt_tokens"].(float64))
	if floor < 200 {
		t.Fatalf("prompt_tokens = %d: the system prompt and tools are larger", floor)
	}
	body := func(window, reserve int, fallbacks ...map[string]any) map[string]any {
		if fallbacks == nil {
			fallbacks = []map[string]any{}
		}
		return map[string]any{"context_window": window, "answer_reserve": reserve, "text_tool_calls": "auto", "fallbacks": fallbacks}
	}
	wantValidation(t, c.do("PUT", path, body(floor+100, 512)), "body", "context_window")
	wantValidation(t, c.do("PUT", path, body(4096, 4096)), "body", "answer_reserve")
	wantValidation(t, c.do("PUT", path, body(0, 0, map[string]any{"provider": "openai", "model": "m", "context_window": floor})),
		"body", "fallbacks", 0, "context_window")
	wantValidation(t, c.do("PUT", path, body(0, 0, map[string]any{"provider": "openai", "model": "m", "base_url": "ftp://x"})),
		"body", "fallbacks", 0, "base_url")
	wantValidation(t, c.do("PUT", path, map[string]any{"context_window": 0, "answer_reserve": 0, "text_tool_calls": "maybe", "fallbacks": []any{}}),
		"body", "text_tool_calls")
	out := c.must(200, "PUT", path, body(floor+1024, 1024)).JSON()
	if int(out["context_window"].(float64)) != floor+1024 || out["text_tool_calls"] != "auto" {
		t.Errorf("saved %v", out)
	}
	other := env.register("other@example.com")
	if r := other.do("GET", path, nil); r.Status != 404 {
		t.Errorf("another tenant's org settings: %d, want 404", r.Status)
	}
	if r := other.do("PUT", path, body(0, 0)); r.Status != 404 {
		t.Errorf("another tenant's org settings PUT: %d, want 404", r.Status)
	}
}

// TestModelTestButton: the console's Test makes one short call to the
// primary, a saved fallback, or a candidate not yet saved, and says what
// happened in words.
func TestModelTestButton(t *testing.T) {
	t.Parallel()
	primary := llmfake.New(t, llmfake.Text("<think>trivial</think>OK"))
	refusing := llmfake.New(t, llmfake.Error(401))
	env := newEnv(t, withLLM(primary))
	c := env.register("test@example.com")
	org := c.orgOf()
	path := "/api/organizations/" + org + "/model-settings/test"
	ok := c.must(200, "POST", path, map[string]any{"position": 0}).JSON()
	if ok["ok"] != true || ok["reply"] != "OK" || ok["reasoning"] != true || ok["model"] != llmfake.Model {
		t.Errorf("primary test = %v", ok)
	}
	bad := c.must(200, "POST", path, map[string]any{"position": 1, "provider": "openai", "model": "other",
		"base_url": refusing.BaseURL(llm.ProviderOpenAI), "api_key": "sk-wrong"}).JSON()
	if bad["ok"] != false || bad["class"] != "auth" || !strings.Contains(bad["error"].(string), "401") {
		t.Errorf("candidate test = %v, want an auth failure in words", bad)
	}
	if r := c.do("POST", path, map[string]any{"position": 3}); r.Status != 404 {
		t.Errorf("testing a fallback that does not exist: %d, want 404", r.Status)
	}
	var req struct {
		MaxTokens int `json:"max_completion_tokens"`
	}
	_ = json.Unmarshal(primary.Requests()[0].Body, &req)
	if req.MaxTokens == 0 || req.MaxTokens > 64 {
		t.Errorf("the test call asked for %d tokens, want a short answer", req.MaxTokens)
	}
}

// TestOverflowIsLearnedForTheOrg: llama.cpp refuses a prompt longer than
// its n_ctx and names it. The run fails in words, the org keeps the
// window, and the next run is measured against it before anything is
// sent.
func TestOverflowIsLearnedForTheOrg(t *testing.T) {
	t.Parallel()
	fake := llmfake.New(t)
	fake.As(llmfake.LlamaCpp, 2500)
	env := newEnv(t, withLLM(fake))
	c := env.register("learn@example.com")
	withProject(t, env, c)
	huge := strings.Repeat("The pod web-1 restarted again with exit code 137 after the OOM killer fired. ", 200)
	_, evs := c.stream("POST", "/api/chat", map[string]any{"message": huge, "name": "too-long"}, 0, nil)
	done := lastOf(t, evs, "done")
	reason, _ := done.Data["reason"].(string)
	if done.Data["status"] != "failed" || !strings.Contains(reason, "context window of 2500 tokens") || !strings.Contains(reason, "--ctx-size") {
		t.Fatalf("done = %v, want a failure that names the window and what to raise", done.Data)
	}
	if e := lastOf(t, evs, "error"); e.Data["code"] != "context_overflow" {
		t.Errorf("error event %v", e.Data)
	}
	sent := len(fake.Requests())
	if sent != 1 {
		t.Errorf("%d requests, want only the refused one: measured against the window it named, the retry cannot fit", sent)
	}
	s := c.must(200, "GET", "/api/organizations/"+c.orgOf()+"/model-settings", nil).JSON()
	if s["learned_context_window"] != float64(2500) || s["learned_model"] != llmfake.Model {
		t.Fatalf("settings after the overflow: %v", s)
	}
	_, evs = c.stream("POST", "/api/chat", map[string]any{"message": huge, "name": "again"}, 0, nil)
	if lastOf(t, evs, "done").Data["status"] != "failed" || len(fake.Requests()) != sent {
		t.Errorf("the second run sent %d more requests; the learned window must refuse it first", len(fake.Requests())-sent)
	}
}

// TestUsageWithoutServerCountsIsMarkedEstimated: a stream that carries no
// usage is counted by the estimate, and the session says its counts are
// estimated.
func TestUsageWithoutServerCountsIsMarkedEstimated(t *testing.T) {
	t.Parallel()
	fake := llmfake.New(t, llmfake.Text("The disk is 40% full.").WithoutUsage())
	env := newEnv(t, withLLM(fake))
	c := env.register("estimate@example.com")
	withProject(t, env, c)
	res, evs := c.stream("POST", "/api/chat", map[string]any{"message": "disk?", "name": "estimate"}, 0, nil)
	u := lastOf(t, evs, "usage").Data["usage"].(map[string]any)
	if u["estimated"] != true || u["input_tokens"].(float64) == 0 {
		t.Errorf("usage event %v, want estimated counts", u)
	}
	s := c.must(200, "GET", "/api/sessions/detail/"+res.Header.Get("X-Session-ID"), nil).JSON()
	if s["tokens_estimated"] != true || s["tokens_in"].(float64) == 0 {
		t.Errorf("session %v, want tokens_estimated with counts", s)
	}
}
