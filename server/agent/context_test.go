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

// logOutput is a 20 KB command output shaped like a journal: a first line
// with the exit code, timestamped lines, and a last line that matters.
func logOutput(i, size int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "exit code %d\n", i%3)
	for n := 0; b.Len() < size-80; n++ {
		fmt.Fprintf(&b, "2026-12-02T05:%02d:%02d host-%02d kubelet[913]: pod web-7d9f8b6c5-x%03d probe ok latency=%dms\n",
			n/60%60, n%60, i, n%997, (n*37)%500)
	}
	fmt.Fprintf(&b, "LAST LINE OF OUTPUT %d", i)
	return b.String()
}

// summarizer answers the run's summary calls, wherever they fall.
func summarizer(fake *llmfake.Server) {
	fake.Respond(func(r llmfake.Request) (llmfake.Turn, bool) {
		if strings.HasPrefix(r.System, "You compress the earlier part") {
			return llmfake.Text("Summary: forty journal reads, all probes ok; call_ids kept.").WithUsage(900, 40), true
		}
		return llmfake.Turn{}, false
	})
}

// TestLongInvestigationFitsSmallWindow runs 40 tool calls of 20 KB each
// against servers whose context is 8192 tokens. Without accounting the
// requests outgrow the window by the third call and the server refuses
// them; with it every request fits, older results are compacted with a
// note naming get_tool_output, and the transcript keeps every byte.
func TestLongInvestigationFitsSmallWindow(t *testing.T) {
	for _, d := range []llmfake.Dialect{llmfake.LlamaCpp, llmfake.Ollama, llmfake.VLLM, llmfake.OpenAI} {
		t.Run(string(d)+"_", func(t *testing.T) {
			const calls, size, window = 40, 20 << 10, 8192
			var turns []llmfake.Turn
			for i := range calls {
				turns = append(turns, llmfake.ToolCall("run_command", fmt.Sprintf(`{"command":"journalctl -u kubelet -n 400 # %d"}`, i)))
			}
			turns = append(turns, llmfake.Text("All forty hosts are healthy."))
			cmd := &commandTool{run: func(_ context.Context, c string) (string, error) {
				var i int
				fmt.Sscanf(c[strings.LastIndexByte(c, '#')+1:], "%d", &i)
				return logOutput(i, size), nil
			}}
			fake, cfg := setup(t, llm.ProviderOpenAI, cmd, turns...)
			fake.As(d, window)
			summarizer(fake)
			cfg.ContextWindow = window
			cfg.MaxSteps = calls + 5
			rec := &recorder{}
			res := mustRun(t, cfg, ask("check the kubelet journal on all 40 hosts"), rec)
			if res.Status != agent.StatusCompleted {
				t.Fatalf("got %s/%s: %s", res.Status, res.Code, res.Reason)
			}
			if n := len(cmd.commands()); n != calls {
				t.Errorf("%d commands ran, want %d", n, calls)
			}
			reserve := agent.DefaultAnswerReserve(window, 0)
			for i, r := range fake.Requests() {
				if r.Tokens+r.MaxTokens > window || r.Truncated {
					t.Errorf("request %d: %d prompt + %d answer tokens > %d (truncated %v)", i, r.Tokens, r.MaxTokens, window, r.Truncated)
				}
				if r.MaxTokens != reserve && !strings.HasPrefix(r.System, "You compress") {
					t.Errorf("request %d: max_tokens %d, want the reserve %d", i, r.MaxTokens, reserve)
				}
			}
			last := fake.Requests()[len(fake.Requests())-1].Text()
			if !strings.Contains(last, `get_tool_output(call_id="`) || !strings.Contains(last, "exit code") {
				t.Errorf("the last request shows no compacted result with its read-back note")
			}
			var compacted int
			for _, e := range rec.of(agent.EventContext) {
				if ce := e.(agent.ContextEvent); ce.Action == "compacted" {
					compacted += ce.Compacted
				}
			}
			if compacted < calls/2 {
				t.Errorf("%d results compacted, want most of %d", compacted, calls)
			}
			full := 0
			for _, m := range res.Transcript {
				if m.Role == llm.RoleTool && len(m.Content) >= size-100 && strings.HasSuffix(m.Content, "LAST LINE OF OUTPUT "+fmt.Sprint(full)) {
					full++
				}
			}
			if full != calls {
				t.Errorf("transcript keeps %d full outputs, want %d", full, calls)
			}
		})
	}
}

// TestSummaryIsCostedAndShown drives a window so small that compaction is
// not enough: earlier turns are summarized by a model call whose usage is
// counted in the run's and reported in a context event.
func TestSummaryIsCostedAndShown(t *testing.T) {
	const window = 3000
	var turns []llmfake.Turn
	for i := range 12 {
		turns = append(turns, llmfake.Reply(strings.Repeat("Checking the next host carefully. ", 10),
			llmfake.Call{Name: "run_command", Arguments: fmt.Sprintf(`{"command":"uptime # %d"}`, i)}))
	}
	turns = append(turns, llmfake.Text("Done."))
	fake, cfg := setup(t, llm.ProviderOpenAI, &commandTool{run: func(context.Context, string) (string, error) {
		return logOutput(1, 4000), nil
	}}, turns...)
	fake.As(llmfake.LlamaCpp, window)
	summarizer(fake)
	cfg.ContextWindow = window
	cfg.Model = "gpt-4o-mini" // priced, so the summary has a cost
	rec := &recorder{}
	res := mustRun(t, cfg, ask("uptime everywhere"), rec)
	if res.Status != agent.StatusCompleted {
		t.Fatalf("got %s/%s: %s", res.Status, res.Code, res.Reason)
	}
	var sum *agent.ContextEvent
	for _, e := range rec.of(agent.EventContext) {
		if ce := e.(agent.ContextEvent); ce.Action == "summarized" {
			sum = &ce
		}
	}
	if sum == nil || sum.Usage == nil || sum.Usage.InputTokens != 900 || sum.Cost <= 0 {
		t.Fatalf("summary event = %+v, want one with the summary call's usage and cost", sum)
	}
	var steps int
	for _, e := range rec.of(agent.EventUsage) {
		steps += e.(agent.UsageEvent).Usage.InputTokens
	}
	if res.Usage.InputTokens != steps || res.Usage.InputTokens < 900 {
		t.Errorf("run usage %d, usage events %d: the summary's 900 must be in both", res.Usage.InputTokens, steps)
	}
	last := fake.Requests()[len(fake.Requests())-1]
	if !strings.Contains(last.Text(), "Summary: forty journal reads") {
		t.Errorf("the summary did not reach the model")
	}
}

// TestGetToolOutputReadsPages reads a compacted result back page by page.
func TestGetToolOutputReadsPages(t *testing.T) {
	out := logOutput(7, 20<<10)
	fake, cfg := setup(t, llm.ProviderOpenAI, &commandTool{outputs: map[string]string{"journalctl": out}},
		llmfake.Turn{Calls: []llmfake.Call{{ID: "call_big", Name: "run_command", Arguments: `{"command":"journalctl"}`}}},
		llmfake.ToolCall("get_tool_output", `{"call_id":"call_big","page":2}`),
		llmfake.ToolCall("get_tool_output", `{"call_id":"call_nope"}`),
		llmfake.Text("Read it."),
	)
	cfg.ContextWindow = 8192
	rec := &recorder{}
	res := mustRun(t, cfg, ask("read the journal"), rec)
	if res.Status != agent.StatusCompleted {
		t.Fatalf("got %s: %s", res.Status, res.Reason)
	}
	results := rec.of(agent.EventToolResult)
	page := results[1].(agent.ToolResultEvent)
	if page.IsError || !strings.Contains(page.Output, "page 2 of ") || !strings.Contains(page.Output, `get_tool_output(call_id="call_big", page=3)`) {
		t.Fatalf("page 2 = %.300q", page.Output)
	}
	body := page.Output[strings.IndexByte(page.Output, '\n')+1:]
	body = body[:strings.LastIndex(body, "\n[next:")]
	if !strings.Contains(out, body) || len(body) < 1000 {
		t.Errorf("page 2 (%d bytes) is not a slice of the output", len(body))
	}
	if miss := results[2].(agent.ToolResultEvent); !miss.IsError || !strings.Contains(miss.Output, "call_big") {
		t.Errorf("unknown call id answered %q, want an error listing call_big", miss.Output)
	}
	shown := fake.Requests()[1].ToolResults()[0].Content
	if !strings.Contains(shown, `get_tool_output(call_id="call_big")`) {
		t.Errorf("the truncated result does not say how to read the rest: %.200q", shown[len(shown)-400:])
	}
	if !strings.Contains(strings.Join(fake.Requests()[0].Tools, " "), "get_tool_output") {
		t.Errorf("get_tool_output not offered: %v", fake.Requests()[0].Tools)
	}
}

// TestOverflowErrorCompactsAndRetriesOnce: with no window configured, each
// server's own refusal teaches the limit; the request is compacted and
// sent once more. A refusal that compaction cannot cure fails the run in
// words.
func TestOverflowErrorCompactsAndRetriesOnce(t *testing.T) {
	cases := []struct {
		provider string
		dialect  llmfake.Dialect
	}{{llm.ProviderOpenAI, llmfake.OpenAI}, {llm.ProviderOpenAI, llmfake.LlamaCpp}, {llm.ProviderOpenAI, llmfake.VLLM},
		{llm.ProviderAnthropic, llmfake.OpenAI}}
	for _, c := range cases {
		t.Run(c.provider+"_"+string(c.dialect), func(t *testing.T) {
			fake, cfg := setup(t, c.provider, &commandTool{run: func(_ context.Context, cmd string) (string, error) {
				return logOutput(len(cmd), 6000), nil
			}},
				llmfake.ToolCall("run_command", `{"command":"a"}`),
				llmfake.ToolCall("run_command", `{"command":"bb"}`),
				llmfake.ToolCall("run_command", `{"command":"ccc"}`),
				llmfake.Text("Found it."),
			)
			fake.As(c.dialect, 4400)
			cfg.MaxTokens = 512
			rec := &recorder{}
			res := mustRun(t, cfg, ask("look"), rec)
			if res.Status != agent.StatusCompleted {
				t.Fatalf("got %s/%s: %s", res.Status, res.Code, res.Reason)
			}
			var retries int
			for _, e := range rec.of(agent.EventContext) {
				if e.(agent.ContextEvent).Action == "overflow_retry" {
					retries++
				}
			}
			if retries != 1 {
				t.Errorf("%d overflow retries, want 1", retries)
			}
			reqs := fake.Requests()
			if n := len(reqs); n != 5 {
				t.Errorf("%d requests, want 5 (one refused and retried)", n)
			}
		})
	}
	t.Run("hopeless", func(t *testing.T) {
		fake, cfg := setup(t, llm.ProviderOpenAI, nil, llmfake.Text("never"))
		fake.As(llmfake.LlamaCpp, 60)
		rec := &recorder{}
		res := mustRun(t, cfg, ask(strings.Repeat("a long question ", 200)), rec)
		if res.Status != agent.StatusFailed || res.Code != agent.CodeContextExceeded {
			t.Fatalf("got %s/%s, want failed/%s", res.Status, res.Code, agent.CodeContextExceeded)
		}
		if !strings.Contains(res.Reason, "context window") || !strings.Contains(res.Reason, "--ctx-size") {
			t.Errorf("reason %q does not say why in words", res.Reason)
		}
		if n := len(fake.Requests()); n > 2 {
			t.Errorf("%d requests, want at most the refused one and one retry", n)
		}
	})
}
