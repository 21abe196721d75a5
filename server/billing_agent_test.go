package server_test

import (
	"testing"

	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// A run over the plan's monthly cap of agent runs stops like one over a
// budget: failed, code budget_exceeded, a reason naming the cap, and the
// model is not called.
func TestBillingAgentRunsStopAtMonthlyCap(t *testing.T) {
	fake := llmfake.New(t, llmfake.Always(llmfake.Text("all good").WithUsage(10, 5)))
	env := billingEnv(t, "showback", "tiny", func(c *server.Config) { withLLM(fake)(c) })
	c := env.register("runs@example.com")
	withProject(t, env, c)
	for i := range 2 {
		_, evs := c.stream("POST", "/api/chat", map[string]any{"message": "check the disk"}, 0, nil)
		if d := lastOf(t, evs, "done"); d.Data["status"] != "completed" {
			t.Fatalf("run %d under the cap: %v", i+1, d.Data)
		}
	}
	_, evs := c.stream("POST", "/api/chat", map[string]any{"message": "and again"}, 0, nil)
	wantBudgetStop(t, evs, "monthly cap of 2 agent runs")
	if n := len(fake.Requests()); n != 2 {
		t.Fatalf("the model was called %d times, want 2 (none past the cap)", n)
	}
	q := c.must(200, "GET", "/api/billing", nil).JSON()["quotas"].([]any)
	for _, x := range q {
		m := x.(map[string]any)
		if m["quota"] == "agent_runs_per_month" && m["current"] != 2.0 {
			t.Fatalf("runs this month: %v", m)
		}
	}
}
