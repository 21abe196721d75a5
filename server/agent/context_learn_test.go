package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// TestLongInvestigationUnconfiguredWindow is the scenario with
// nothing configured: 40 calls of 20 KB against llama.cpp's server with an
// 8192-token context and a model name no default knows. The server's
// first refusal names n_ctx; from then on every request is kept inside it.
// It uses only what the agent package had before context accounting, so
// it runs unchanged against commit 246031e, where the run fails with
// bad_request at the third call.
func TestLongInvestigationUnconfiguredWindow(t *testing.T) {
	const calls, size, window = 40, 20 << 10, 8192
	var turns []llmfake.Turn
	for i := range calls {
		turns = append(turns, llmfake.ToolCall("run_command", fmt.Sprintf(`{"command":"journalctl -n 400 # %d"}`, i)))
	}
	turns = append(turns, llmfake.Text("All forty hosts are healthy."))
	cmd := &commandTool{run: func(_ context.Context, c string) (string, error) {
		return strings.Repeat("2026-12-02T05:00:00 host kubelet[913]: probe ok latency=12ms\n", size/64), nil
	}}
	fake, cfg := setup(t, llm.ProviderOpenAI, cmd, turns...)
	fake.As(llmfake.LlamaCpp, window)
	fake.Respond(func(r llmfake.Request) (llmfake.Turn, bool) { // summary calls, wherever they fall
		return llmfake.Text("Summary: journals read, all probes ok."), strings.HasPrefix(r.System, "You compress")
	})
	cfg.MaxSteps = calls + 5
	res, err := agent.Run(context.Background(), cfg, ask("check the kubelet journal on all 40 hosts"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.StatusCompleted {
		t.Fatalf("got %s/%s after %d commands: %s", res.Status, res.Code, len(cmd.commands()), res.Reason)
	}
	if n := len(cmd.commands()); n != calls {
		t.Errorf("%d commands ran, want %d", n, calls)
		for i, r := range fake.Requests() {
			t.Logf("request %d: %d tokens, %d messages", i, r.Tokens, len(r.Messages))
		}
	}
}
