package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// A run hands its state to Checkpoint at every boundary, and before a
// change-capable call starts; resumed from the checkpoint taken just before
// the call (a crash while it ran), the call is not run again: the model is
// told its outcome is unknown, and the counters go on from the checkpoint.
func TestCheckpointsAndAResumeThatDoesNotRerunAStartedCall(t *testing.T) {
	cmd := &commandTool{}
	fake, cfg := setup(t, llm.ProviderOpenAI, cmd,
		llmfake.ToolCall("run_command", `{"command":"systemctl restart api"}`),
		llmfake.Text("Restarted."),
		llmfake.Text("It may have restarted; I will check its status first."),
	)
	var cps []agent.Checkpoint
	cfg.Checkpoint = func(_ context.Context, cp agent.Checkpoint) {
		cp.Transcript = append([]llm.Message(nil), cp.Transcript...)
		cps = append(cps, cp)
	}
	res := mustRun(t, cfg, ask("restart the api"), &recorder{})
	if res.Status != agent.StatusCompleted {
		t.Fatalf("got %s (%s)", res.Status, res.Reason)
	}
	// After the model call, before the call, after its result, after the answer.
	if len(cps) != 4 || cps[1].Started == nil || cps[1].Started.Name != "run_command" || cps[0].Started != nil || cps[2].Started != nil {
		t.Fatalf("checkpoints: %+v", cps)
	}
	before := cps[1]
	if before.Steps != 1 || before.Usage.InputTokens == 0 || len(before.Transcript) != 2 {
		t.Fatalf("checkpoint before the call: steps %d, usage %+v, %d messages", before.Steps, before.Usage, len(before.Transcript))
	}

	// The process died while the command ran: resume from that checkpoint.
	cfg.Checkpoint = nil
	cfg.From = &agent.ResumeFrom{Steps: before.Steps, Usage: before.Usage, Cost: before.Cost, Started: before.Started.ID}
	rec := &recorder{}
	res = mustRun(t, cfg, before.Transcript, rec)
	if res.Status != agent.StatusCompleted || res.Steps != 2 {
		t.Fatalf("resumed: got %s after %d steps (%s)", res.Status, res.Steps, res.Reason)
	}
	if got := cmd.commands(); len(got) != 1 {
		t.Fatalf("the command ran %d times, want once (before the crash only)", len(got))
	}
	if res.Usage.InputTokens <= before.Usage.InputTokens {
		t.Fatalf("usage %+v does not count the calls before the interruption (%+v)", res.Usage, before.Usage)
	}
	reqs := fake.Requests()
	sent := reqs[len(reqs)-1].ToolResults()
	if len(sent) != 1 || !strings.Contains(sent[0].Content, "interrupted; outcome unknown: check before retrying") {
		t.Fatalf("the model was not told: %+v", sent)
	}
	results := rec.of(agent.EventToolResult)
	if len(results) != 1 || !results[0].(agent.ToolResultEvent).IsError {
		t.Fatalf("tool.result of the interrupted call: %+v", results)
	}
}

// A read-only call without a result is simply run again on resume (even
// were it marked started: only change-capable calls are held back).
func TestResumeRerunsAReadOnlyCall(t *testing.T) {
	_, cfg := setup(t, llm.ProviderOpenAI, nil, llmfake.Text("Up 3 days."))
	history := []llm.Message{{Role: llm.RoleUser, Content: "how long has it been up?"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "uptime", Arguments: []byte(`{}`)}}}}
	cfg.From = &agent.ResumeFrom{Steps: 1}
	rec := &recorder{}
	res := mustRun(t, cfg, history, rec)
	results := rec.of(agent.EventToolResult)
	if res.Status != agent.StatusCompleted || len(results) != 1 || results[0].(agent.ToolResultEvent).Output != "up 3 days" {
		t.Fatalf("got %s, results %+v", res.Status, results)
	}
	if res.Steps != 2 {
		t.Fatalf("steps %d, want 2 (one before the interruption)", res.Steps)
	}
}
