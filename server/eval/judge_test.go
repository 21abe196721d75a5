package eval_test

import (
	"context"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/server/eval"
)

// A rubric's verdict comes from the judge model and is reported beside
// the checks, which it does not change; the judge sees the run as data.
func TestJudgeVerdictIsReportedApart(t *testing.T) {
	s, err := eval.Parse("judged.yaml", []byte("name: judged\ninput:\n  prompt: is db-1 fine?\nexpect:\n  root_cause:\n    match: [disk]\n  rubric: names the full disk\n"))
	if err != nil {
		t.Fatal(err)
	}
	agentFake := llmfake.New(t,
		llmfake.ToolCall("report_finding", `{"summary":"db-1's disk is full","hypotheses":[{"cause":"disk full","confidence":"high","evidence":[]}],"impact":"writes fail","next_steps":[]}`),
		llmfake.Text("The disk is full."))
	judgeFake := llmfake.New(t, llmfake.Text("FAIL\nIt never says which filesystem."))
	agentP, _ := llm.New(agentFake.Config(llm.ProviderOpenAI))
	judgeP, _ := llm.New(judgeFake.Config(llm.ProviderOpenAI))
	rep, err := eval.Run(context.Background(), eval.Options{Scenarios: []*eval.Scenario{s},
		Models: []eval.Model{{Name: llmfake.Model, Provider: agentP}}, Judge: &eval.Judge{Provider: judgeP, Model: llmfake.Model}})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Runs[0]
	if !r.Pass || r.JudgeVerdict != "FAIL" || !strings.Contains(r.JudgeRationale, "filesystem") {
		t.Fatalf("pass %v, verdict %q %q", r.Pass, r.JudgeVerdict, r.JudgeRationale)
	}
	asked := judgeFake.Requests()[0].Text()
	if !strings.Contains(asked, "names the full disk") || !strings.Contains(asked, "<<<INVESTIGATION") {
		t.Fatalf("the judge was not given the rubric and the fenced run:\n%s", asked)
	}
}
