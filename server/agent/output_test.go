package agent_test

import (
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// TestDuplicateCallIDIsAnsweredAsAMistake: two calls with one id cannot
// both be matched to a result; the second is answered with an error that
// says so, and only the first runs.
func TestDuplicateCallIDIsAnsweredAsAMistake(t *testing.T) {
	cmd := &commandTool{}
	fake, cfg := setup(t, llm.ProviderOpenAI, cmd,
		llmfake.Turn{Calls: []llmfake.Call{
			{ID: "call_1", Name: "run_command", Arguments: `{"command":"df -h"}`},
			{ID: "call_1", Name: "run_command", Arguments: `{"command":"rm -rf /tmp/x"}`},
		}},
		llmfake.Text("Disk is fine."),
	)
	rec := &recorder{}
	res := mustRun(t, cfg, ask("disk?"), rec)
	if res.Status != agent.StatusCompleted {
		t.Fatalf("got %s: %s", res.Status, res.Reason)
	}
	if got := cmd.commands(); len(got) != 1 || got[0] != "df -h" {
		t.Errorf("ran %q, want only the first call", got)
	}
	results := fake.Requests()[1].ToolResults()
	if len(results) != 2 || results[0].ToolCallID == results[1].ToolCallID || !strings.Contains(results[1].Content, `reused the call id "call_1"`) {
		t.Errorf("results sent back = %+v", results)
	}
	if n := len(rec.of(agent.EventOutputInvalid)); n != 1 {
		t.Errorf("%d output.invalid events, want 1", n)
	}
}

// TestMalformedLoopStopsWithModelOutputInvalid: a model that never gets a
// call right is stopped at the bound, its last output kept.
func TestMalformedLoopStopsWithModelOutputInvalid(t *testing.T) {
	forEachProvider(t, func(t *testing.T, provider string) {
		fake, cfg := setup(t, provider, nil, llmfake.Always(llmfake.ToolCall("run_command", `{"cmd": "ls"}`)))
		cfg.MaxInvalidOutputs = 3
		rec := &recorder{}
		res := mustRun(t, cfg, ask("list"), rec)
		if res.Status != agent.StatusFailed || res.Code != agent.CodeModelOutputInvalid || res.Steps != 3 {
			t.Fatalf("got %s/%s after %d steps, want failed/%s after 3", res.Status, res.Code, res.Steps, agent.CodeModelOutputInvalid)
		}
		if !strings.Contains(res.Reason, "malformed in 3 steps") || !strings.Contains(res.Reason, "valid fields: command (string, required)") {
			t.Errorf("reason %q does not say what was wrong and what is valid", res.Reason)
		}
		last := res.Transcript[len(res.Transcript)-2]
		if last.Role != llm.RoleAssistant || len(last.ToolCalls) != 1 || string(last.ToolCalls[0].Arguments) != `{"cmd": "ls"}` {
			t.Errorf("last model output not kept: %+v", last)
		}
		if n := len(fake.Requests()); n != 3 {
			t.Errorf("%d model calls, want 3", n)
		}
		evs := rec.of(agent.EventOutputInvalid)
		if len(evs) != 3 || evs[2].(agent.OutputInvalidEvent).Count != 3 {
			t.Errorf("output.invalid events = %+v, want 3 counted", evs)
		}
	})
}

// TestEmptyAnswerIsRetriedOnce: one empty answer is asked again; two in a
// row end the run saying so.
func TestEmptyAnswerIsRetriedOnce(t *testing.T) {
	_, cfg := setup(t, llm.ProviderOpenAI, nil, llmfake.Text(""), llmfake.Text("Here it is."))
	res := mustRun(t, cfg, ask("hi"), &recorder{})
	if res.Status != agent.StatusCompleted || res.Transcript[len(res.Transcript)-1].Content != "Here it is." {
		t.Fatalf("got %s (%s), want the second answer", res.Status, res.Reason)
	}
	_, cfg = setup(t, llm.ProviderOpenAI, nil, llmfake.Text(""), llmfake.Text(""))
	res = mustRun(t, cfg, ask("hi"), &recorder{})
	if res.Status != agent.StatusFailed || res.Code != agent.CodeModelOutputInvalid || !strings.Contains(res.Reason, "empty answer twice") {
		t.Fatalf("got %s/%s (%s), want failed/model_output_invalid", res.Status, res.Code, res.Reason)
	}
}

// TestThinkIsKeptButNeverTheAnswer covers the three ways reasoning
// arrives: <think> in the text (Ollama, llama.cpp without a reasoning
// parser), reasoning_content deltas (llama.cpp, vLLM), and Anthropic's
// signed thinking blocks, which alone are sent back.
func TestThinkIsKeptButNeverTheAnswer(t *testing.T) {
	cases := []struct {
		name     string
		provider string
		dialect  llmfake.Dialect
		first    llmfake.Turn
	}{
		{"think_tags", llm.ProviderOpenAI, llmfake.Ollama,
			llmfake.Reply("<think>The disk may be full; check df.</think>Checking.", llmfake.Call{Name: "run_command", Arguments: `{"command":"df -h"}`})},
		{"reasoning_content", llm.ProviderOpenAI, llmfake.LlamaCpp,
			llmfake.Reply("Checking.", llmfake.Call{Name: "run_command", Arguments: `{"command":"df -h"}`}).Thinking("The disk may be full; check df.")},
		{"anthropic_thinking", llm.ProviderAnthropic, llmfake.OpenAI,
			llmfake.Reply("Checking.", llmfake.Call{Name: "run_command", Arguments: `{"command":"df -h"}`}).Thinking("The disk may be full; check df.")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake, cfg := setup(t, c.provider, nil, c.first, llmfake.Text("<think>40% is fine.</think>The disk is 40% full."))
			fake.As(c.dialect, 0)
			rec := &recorder{}
			res := mustRun(t, cfg, ask("disk?"), rec)
			if res.Status != agent.StatusCompleted {
				t.Fatalf("got %s: %s", res.Status, res.Reason)
			}
			first := res.Transcript[1]
			if first.Content != "Checking." || first.Reasoning != "The disk may be full; check df." {
				t.Errorf("first turn = %q / reasoning %q", first.Content, first.Reasoning)
			}
			final := res.Transcript[len(res.Transcript)-1]
			if final.Content != "The disk is 40% full." || final.Reasoning != "40% is fine." {
				t.Errorf("answer = %q / reasoning %q", final.Content, final.Reasoning)
			}
			var streamed strings.Builder
			for _, d := range rec.of(agent.EventMessageDelta) {
				streamed.WriteString(d.(agent.MessageDelta).Text)
			}
			if strings.Contains(streamed.String(), "think") || strings.Contains(streamed.String(), "may be full") {
				t.Errorf("reasoning was streamed as answer text: %q", streamed.String())
			}
			sent := fake.Requests()[1]
			if strings.Contains(sent.Text(), "may be full") != (c.provider == llm.ProviderAnthropic) {
				t.Errorf("reasoning sent back = %v; only Anthropic's signed thinking goes back", strings.Contains(sent.Text(), "may be full"))
			}
			if c.provider == llm.ProviderAnthropic && !strings.Contains(string(sent.Body), `"signature":"EqQB`) {
				t.Errorf("Anthropic thinking block sent back without its signature")
			}
		})
	}
}

// TestTextToolCalls: calls an open model writes into its text run when
// recognition is on (the default for a local base URL) and stay text when
// it is off.
func TestTextToolCalls(t *testing.T) {
	formats := map[string]string{
		"hermes":      `Let me look.<tool_call>{"name": "run_command", "arguments": {"command": "df -h"}}</tool_call>`,
		"mistral":     `[TOOL_CALLS][{"name": "run_command", "arguments": {"command": "df -h"}, "id": "a1b2c3d4e"}]`,
		"mistral_v11": `[TOOL_CALLS]run_command[ARGS]{"command": "df -h"}`,
		"bare_json":   `{"name": "run_command", "parameters": {"command": "df -h"}}`,
	}
	for name, text := range formats {
		for _, enabled := range []bool{true, false} {
			t.Run(name+map[bool]string{true: "_on", false: "_off"}[enabled], func(t *testing.T) {
				cmd := &commandTool{}
				fake := llmfake.New(t, llmfake.Text(text), llmfake.Text("Disk is 40% full."))
				fake.As(llmfake.Ollama, 0)
				lc := fake.Config(llm.ProviderOpenAI)
				if !enabled {
					lc.TextToolCalls = &enabled
				}
				p, err := llm.New(lc)
				if err != nil {
					t.Fatal(err)
				}
				tools, _ := agent.NewToolSet(cmd)
				res := mustRun(t, agent.Config{Provider: p, Tools: tools}, ask("disk?"), &recorder{})
				if res.Status != agent.StatusCompleted {
					t.Fatalf("got %s: %s", res.Status, res.Reason)
				}
				ran := len(cmd.commands()) == 1 && cmd.commands()[0] == "df -h"
				if ran != enabled {
					t.Errorf("ran %q with recognition %v", cmd.commands(), enabled)
				}
				if !enabled && res.Transcript[1].Content != text {
					t.Errorf("answer = %q, want the text as written", res.Transcript[1].Content)
				}
				if enabled && strings.Contains(res.Transcript[1].Content, "run_command") {
					t.Errorf("the call text stayed in the answer: %q", res.Transcript[1].Content)
				}
			})
		}
	}
}

// TestStreamWithoutUsageIsEstimated: a server that sends no usage gets
// our count, marked estimated through the run's totals.
func TestStreamWithoutUsageIsEstimated(t *testing.T) {
	_, cfg := setup(t, llm.ProviderOpenAI, nil, llmfake.Text("The disk is 40% full.").WithoutUsage())
	rec := &recorder{}
	res := mustRun(t, cfg, ask("disk?"), rec)
	if !res.Usage.Estimated || res.Usage.InputTokens == 0 || res.Usage.OutputTokens == 0 {
		t.Errorf("usage = %+v, want an estimated count", res.Usage)
	}
	u := rec.of(agent.EventUsage)[0].(agent.UsageEvent)
	if !u.Usage.Estimated || !u.Total.Estimated {
		t.Errorf("usage event = %+v, want estimated marked", u)
	}
}
