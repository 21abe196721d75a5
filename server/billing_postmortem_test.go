package server_test

import (
	"testing"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/store"
)

// The model call that drafts a postmortem is metered like a run's model
// calls: its tokens and cost appear in the month's usage and statement
// (llm_calls beside agent_sessions), and it is not an agent run.
func TestBillingMetersPostmortemDrafts(t *testing.T) {
	fake := llmfake.New(t, llmfake.Text("looked: the latency is back").WithUsage(100, 50))
	env := billingEnv(t, "showback", "metered", withLLM(fake))
	c := env.register("pm-meter@example.com")
	f := newHook(t, env, c, map[string]any{"provider": "alertmanager"})
	f.post(t, amAlert("g", "fp", "firing"), bearer(f.secret))
	f.dispatch(t)
	pollUntil(t, "the alert's run", func() map[string]any { return c.must(200, "GET", "/api/tasks/"+f.task, nil).JSON() },
		func(m map[string]any) bool { return m["last_status"] == "completed" })
	before := c.must(200, "GET", "/api/billing/usage", nil).JSON()["meters"].(map[string]any)

	// fakePrices: $1000 per million tokens in, $2000 out: the draft costs $1 + $1.
	fake.Add(llmfake.Text("## Summary\n\nThe api was slow.\n").WithUsage(1000, 500))
	incID := incidentsOf(t, c)[0]["id"].(string)
	c.must(200, "POST", "/api/incidents/"+incID+"/resolve", map[string]any{"summary": "went away"})
	pollUntil(t, "the model's draft", func() map[string]any { return c.do("GET", "/api/postmortems/"+incID, nil).JSON() },
		func(m map[string]any) bool { return m["status"] == "draft" && m["model"] != "" && m["model"] != nil })

	after := c.must(200, "GET", "/api/billing/usage", nil).JSON()["meters"].(map[string]any)
	for meter, delta := range map[string]float64{"agent_runs": 0, "agent_tokens": 1500, "llm_cost_usd": 2} {
		if got := after[meter].(float64) - before[meter].(float64); !near(got, delta) {
			t.Fatalf("%s grew by %g with the draft, want %g (before %v, after %v)", meter, got, delta, before, after)
		}
	}
	var st stmt
	c.must(200, "GET", "/api/billing/statements/"+store.Period(env.clock()), nil).decode(t, &st)
	for _, meter := range []string{"agent_runs", "agent_tokens", "llm_cost_usd"} {
		if l := st.line(c.Project, meter); l == nil || !near(l.RawQuantity, after[meter].(float64)) {
			t.Fatalf("statement line %s: %+v, want raw quantity %v (lines %+v)", meter, l, after[meter], st.Lines)
		}
	}
	if l := st.line(c.Project, "llm_cost_usd"); !near(l.AmountUSD, 1.5*after["llm_cost_usd"].(float64)) {
		t.Fatalf("cost line priced %g, want 1.5 x %v", l.AmountUSD, after["llm_cost_usd"])
	}
}
