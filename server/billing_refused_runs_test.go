package server_test

import (
	"testing"

	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// A run the monthly cap refuses never ran: it is not counted against the
// cap, not metered and not on the statement, however many are refused.
func TestBillingRefusedRunsAreNotMetered(t *testing.T) {
	fake := llmfake.New(t, llmfake.Always(llmfake.Text("all good").WithUsage(10, 5)))
	env := billingEnv(t, "showback", "tiny", func(c *server.Config) { withLLM(fake)(c) })
	c := env.register("refused@example.com")
	withProject(t, env, c)
	for i := range 2 {
		_, evs := c.stream("POST", "/api/chat", map[string]any{"message": "check the disk"}, 0, nil)
		if d := lastOf(t, evs, "done"); d.Data["status"] != "completed" {
			t.Fatalf("run %d under the cap: %v", i+1, d.Data)
		}
	}
	for range 2 {
		_, evs := c.stream("POST", "/api/chat", map[string]any{"message": "and again"}, 0, nil)
		wantBudgetStop(t, evs, "monthly cap of 2 agent runs is reached (2 this month")
	}
	for _, x := range c.must(200, "GET", "/api/billing", nil).JSON()["quotas"].([]any) {
		if m := x.(map[string]any); m["quota"] == "agent_runs_per_month" && m["current"] != 2.0 {
			t.Fatalf("runs counted against the cap: %v, want 2", m["current"])
		}
	}
	meters := c.must(200, "GET", "/api/billing/usage", nil).JSON()["meters"].(map[string]any)
	if meters["agent_runs"] != 2.0 {
		t.Fatalf("metered runs: %v, want 2 (refused runs are not metered)", meters["agent_runs"])
	}
}
