package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/server/eval"
)

// A real alert-triggered investigation (a read-only command on the server,
// then a finding) is recorded as a scenario; the scenario loads, carries
// the alert, the command with its real output (the project's secret
// masked) and the finding's root cause as its expectation; and replaying
// the same investigation against it passes, every call answered.
func TestEvalRecordThenRunRoundTrips(t *testing.T) {
	finding := `{"summary":"The api host's disk check shows /srv full","hypotheses":[{"cause":"the srv volume is full of old builds","confidence":"high","evidence":["ev1"]}],"impact":"deploys fail","next_steps":[]}`
	script := []llmfake.Turn{
		llmfake.ToolCall("run_command", `{"target":"server","command":"echo token=rec0rd-secret-value; echo /srv 100%"}`),
		llmfake.ToolCall("report_finding", finding),
		llmfake.Text("/srv is full of old builds."),
	}
	fake := llmfake.New(t, script...)
	env := newEnv(t, withLLM(fake), allowLocal)
	c := env.register("record@example.com")
	withProject(t, env, c)
	c.must(200, "PUT", "/api/secrets/DEPLOY_TOKEN", map[string]any{"value": "rec0rd-secret-value"})
	c.must(200, "PUT", "/api/command-policy", map[string]any{"auto_allow_read_only": true})

	am := newHook(t, env, c, map[string]any{"provider": "alertmanager"})
	if r := am.post(t, amAlert("g-rec", "fp-rec", "firing"), bearer(am.secret)); r.Status != 202 {
		t.Fatalf("alert: %d %s", r.Status, r.Body)
	}
	am.dispatch(t)
	inc := c.must(200, "GET", "/api/incidents", nil).JSON()["items"].([]any)[0].(map[string]any)["id"].(string)
	detail := pollUntil(t, "the incident's finding", func() map[string]any { return c.must(200, "GET", "/api/incidents/"+inc, nil).JSON() },
		func(m map[string]any) bool { return m["latest_finding"] != nil })
	sid := detail["latest_finding"].(map[string]any)["session_id"].(string)
	pollUntil(t, "the run's end", func() map[string]any { return c.must(200, "GET", "/api/sessions/detail/"+sid, nil).JSON() },
		func(m map[string]any) bool { return m["status"] != "running" && m["status"] != "pending" })

	rec := c.must(200, "GET", "/api/incidents/"+inc+"/eval-scenario", nil).JSON()
	text := rec["yaml"].(string)
	if strings.Contains(text, "rec0rd-secret-value") {
		t.Fatalf("the recorded scenario carries a secret:\n%s", text)
	}
	sc, err := eval.Parse("recorded.yaml", []byte(text))
	if err != nil {
		t.Fatalf("the recorded scenario does not load: %v\n%s", err, text)
	}
	if len(sc.Input.Alerts) == 0 || len(sc.World.Commands) != 1 || !strings.Contains(sc.World.Commands[0].Output, "/srv 100%") ||
		len(sc.Expect.RootCause.Match) != 1 || !strings.Contains(sc.Expect.RootCause.Match[0], "srv volume is full") {
		t.Fatalf("the recorded scenario misses what happened:\n%s", text)
	}

	// Replay the same investigation against it.
	replay := llmfake.New(t, script...)
	p, _ := llm.New(replay.Config(llm.ProviderOpenAI))
	rep, err := eval.Run(context.Background(), eval.Options{Scenarios: []*eval.Scenario{sc}, Models: []eval.Model{{Name: llmfake.Model, Provider: p}}})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Runs[0]
	if !r.Pass || r.Unmatched != 0 || len(r.Calls) != 1 || !r.Calls[0].Matched {
		t.Fatalf("replaying the recorded investigation: pass %v, unmatched %d, failures %v, calls %+v", r.Pass, r.Unmatched, r.Failures, r.Calls)
	}
	// Another project's incident id is a 404 (isolation sweep covers the route too).
	c.must(404, "GET", "/api/incidents/0192f0c4-0000-7000-8000-000000000000/eval-scenario", nil)
}
