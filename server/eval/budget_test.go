package eval_test

import (
	"context"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/server/eval"
)

// A run over its scenario's limits stops and says so; once the whole
// evaluation's budget is spent, the runs left are reported as not run.
func TestEvalBudgetsStopRunsAndSayWhy(t *testing.T) {
	loop, err := eval.Parse("loop.yaml", []byte("name: loop\ninput:\n  prompt: check db-1\nexpect:\n  root_cause:\n    match: [disk]\n  max_steps: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	fake := llmfake.New(t, llmfake.Always(llmfake.ToolCall("search_knowledge", `{"query":"disk"}`).WithUsage(100000, 1000)))
	p, _ := llm.New(fake.Config(llm.ProviderOpenAI))
	rep, err := eval.Run(context.Background(), eval.Options{Scenarios: []*eval.Scenario{loop}, Repeat: 3, Parallel: 1, MaxCostUSD: 0.000001,
		Models: []eval.Model{{Name: "gpt-4o", Provider: p}}})
	if err != nil {
		t.Fatal(err)
	}
	first, rest := rep.Runs[0], rep.Runs[1:]
	if first.Pass || !strings.Contains(strings.Join(first.Failures, "; "), "over the limit of 2") {
		t.Fatalf("the looping run: pass %v, failures %v", first.Pass, first.Failures)
	}
	for _, r := range rest {
		if !r.Skipped || !strings.Contains(r.Failures[0], "cost budget was spent") {
			t.Fatalf("a run past the evaluation's budget: %+v", r)
		}
	}
	if g := rep.Groups[0]; g.Runs != 1 || g.Skipped != 2 {
		t.Fatalf("group: %+v", g)
	}
}
