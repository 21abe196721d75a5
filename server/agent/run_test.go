package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

func TestStreamsDeltasThenMessageUsageDone(t *testing.T) {
	forEachProvider(t, func(t *testing.T, provider string) {
		_, cfg := setup(t, provider, nil, llmfake.Text("All three nodes are healthy and ready."))
		rec := &recorder{}
		res := mustRun(t, cfg, ask("status?"), rec)
		if res.Status != agent.StatusCompleted || res.Steps != 1 {
			t.Fatalf("got %s after %d steps (%s), want completed after 1", res.Status, res.Steps, res.Reason)
		}
		if got := rec.types(); got != "message.delta message usage done" {
			t.Errorf("events = %q", got)
		}
		var text strings.Builder
		deltas := rec.of(agent.EventMessageDelta)
		for _, d := range deltas {
			text.WriteString(d.(agent.MessageDelta).Text)
		}
		if len(deltas) < 3 || text.String() != "All three nodes are healthy and ready." {
			t.Errorf("%d deltas joined to %q", len(deltas), text.String())
		}
		if msg := rec.of(agent.EventMessage)[0].(agent.MessageEvent); msg.Content != text.String() || msg.Step != 1 {
			t.Errorf("message event = %+v", msg)
		}
		if n := len(res.Transcript); n != 2 || res.Transcript[1].Role != llm.RoleAssistant {
			t.Errorf("transcript = %+v", res.Transcript)
		}
	})
}

func TestToolCallRunsAndItsFencedResultGoesBack(t *testing.T) {
	forEachProvider(t, func(t *testing.T, provider string) {
		cmd := &commandTool{outputs: map[string]string{"df -h /var": "/dev/sda1  50G  20G  30G  40% /var"}}
		fake, cfg := setup(t, provider, cmd,
			llmfake.Reply("Let me look.", llmfake.Call{Name: "run_command", Arguments: `{"command":"df -h /var"}`}),
			llmfake.Text("/var is 40% full."),
		)
		rec := &recorder{}
		res := mustRun(t, cfg, ask("is /var full?"), rec)
		if res.Status != agent.StatusCompleted || res.Steps != 2 {
			t.Fatalf("got %s after %d steps (%s)", res.Status, res.Steps, res.Reason)
		}
		if got := cmd.commands(); len(got) != 1 || got[0] != "df -h /var" {
			t.Errorf("commands run = %q", got)
		}
		want := "message.delta message usage tool.call tool.result message.delta message usage done"
		if got := rec.types(); got != want {
			t.Errorf("events = %q\nwant     %q", got, want)
		}
		result := rec.of(agent.EventToolResult)[0].(agent.ToolResultEvent)
		if result.IsError || result.Output != "/dev/sda1  50G  20G  30G  40% /var" || result.Name != "run_command" {
			t.Errorf("tool.result = %+v", result)
		}
		reqs := fake.Requests()
		if !strings.Contains(reqs[0].System, "You are an SRE assistant.") || !strings.Contains(reqs[0].System, "untrusted") {
			t.Errorf("system prompt sent = %q", reqs[0].System)
		}
		sent := reqs[1].ToolResults()
		if len(sent) != 1 || sent[0].ToolCallID != result.CallID {
			t.Fatalf("tool results sent = %+v, want one for %s", sent, result.CallID)
		}
		body := sent[0].Content
		if !strings.HasPrefix(body, "<<<TOOL OUTPUT ") || !strings.Contains(body, "untrusted data from tool run_command") ||
			!strings.Contains(body, "40% /var") {
			t.Errorf("tool result as the model saw it:\n%s", body)
		}
		// The transcript keeps the raw output, not the fenced view.
		if got := res.Transcript[2]; got.Role != llm.RoleTool || got.Content != result.Output {
			t.Errorf("transcript tool message = %+v", got)
		}
	})
}

func TestMultiStepLoopWithSeveralCallsPerStep(t *testing.T) {
	forEachProvider(t, func(t *testing.T, provider string) {
		cmd := &commandTool{}
		fake, cfg := setup(t, provider, cmd,
			llmfake.Reply("", llmfake.Call{Name: "uptime", Arguments: `{}`},
				llmfake.Call{Name: "run_command", Arguments: `{"command":"free -m"}`}),
			llmfake.ToolCall("run_command", `{"command":"ps aux --sort=-%mem"}`),
			llmfake.ToolCall("run_command", `{"command":"journalctl -u app -n 50"}`),
			llmfake.Text("The app leaks memory."),
		)
		res := mustRun(t, cfg, ask("why is it slow?"), &recorder{})
		if res.Status != agent.StatusCompleted || res.Steps != 4 {
			t.Fatalf("got %s after %d steps (%s)", res.Status, res.Steps, res.Reason)
		}
		if got := strings.Join(cmd.commands(), "|"); got != "free -m|ps aux --sort=-%mem|journalctl -u app -n 50" {
			t.Errorf("commands = %q", got)
		}
		last := fake.Requests()[3]
		if n := len(last.ToolResults()); n != 4 {
			t.Errorf("last request carried %d tool results, want 4", n)
		}
		if !strings.Contains(last.Text(), "up 3 days") {
			t.Errorf("uptime output missing from history")
		}
	})
}

func TestMaxStepsStopsARunThatNeverAnswers(t *testing.T) {
	forEachProvider(t, func(t *testing.T, provider string) {
		fake, cfg := setup(t, provider, nil, llmfake.Always(llmfake.ToolCall("uptime", `{}`)))
		cfg.MaxSteps = 3
		rec := &recorder{}
		res := mustRun(t, cfg, ask("loop"), rec)
		if res.Status != agent.StatusFailed || res.Code != agent.CodeMaxSteps || res.Steps != 3 {
			t.Errorf("got %s/%s after %d steps, want failed/max_steps after 3", res.Status, res.Code, res.Steps)
		}
		if n := len(fake.Requests()); n != 3 {
			t.Errorf("%d model calls, want 3", n)
		}
		if ev := rec.events[len(rec.events)-2]; ev.Type != agent.EventError {
			t.Errorf("event before done = %s, want error", ev.Type)
		}
	})
}

func TestMalformedCallsAreAnsweredNotRun(t *testing.T) {
	forEachProvider(t, func(t *testing.T, provider string) {
		cmd := &commandTool{}
		fake, cfg := setup(t, provider, cmd,
			llmfake.ToolCall("run_command", `{"command": "df -h`), // cut short: not JSON
			llmfake.ToolCall("run_command", `{"cmd":"df -h"}`),    // schema: wrong field
			llmfake.ToolCall("run_command", `["df","-h"]`),        // not an object
			llmfake.ToolCall("drop_database", `{"name":"prod"}`),  // unknown tool
			llmfake.Text("I could not run anything."),
		)
		rec := &recorder{}
		res := mustRun(t, cfg, ask("disk?"), rec)
		if res.Status != agent.StatusCompleted || res.Steps != 5 {
			t.Fatalf("got %s after %d steps (%s)", res.Status, res.Steps, res.Reason)
		}
		if got := cmd.commands(); len(got) != 0 {
			t.Errorf("tool ran with bad arguments: %q", got)
		}
		wants := []string{"not valid JSON", "do not match its schema", "must be a JSON object", `unknown tool "drop_database"`}
		results := rec.of(agent.EventToolResult)
		if len(results) != len(wants) {
			t.Fatalf("%d tool results, want %d", len(results), len(wants))
		}
		for i, want := range wants {
			r := results[i].(agent.ToolResultEvent)
			if !r.IsError || !strings.Contains(r.Output, want) {
				t.Errorf("result %d = %+v, want an error containing %q", i, r, want)
			}
		}
		if got := fake.Requests()[4].ToolResults(); len(got) != 4 || !strings.Contains(got[3].Content, "available tools: [run_command uptime]") {
			t.Errorf("errors sent back to the model = %+v", got)
		}
	})
}

func TestGateBlockIsReportedToTheModel(t *testing.T) {
	forEachProvider(t, func(t *testing.T, provider string) {
		cmd := &commandTool{}
		fake, cfg := setup(t, provider, cmd,
			llmfake.ToolCall("run_command", `{"command":"rm -rf /var/log"}`),
			llmfake.ToolCall("run_command", `{"command":"du -sh /var/log"}`),
			llmfake.Text("Logs use 2G; I was not allowed to delete them."),
		)
		var seen []agent.Call
		cfg.Gate = agent.GateFunc(func(_ context.Context, c agent.Call) agent.Decision {
			seen = append(seen, c)
			if strings.Contains(string(c.Arguments), "rm ") {
				return agent.Block("must_never: delete files")
			}
			return agent.Allow()
		})
		rec := &recorder{}
		res := mustRun(t, cfg, ask("free space"), rec)
		if res.Status != agent.StatusCompleted {
			t.Fatalf("status %s (%s)", res.Status, res.Reason)
		}
		if got := cmd.commands(); len(got) != 1 || got[0] != "du -sh /var/log" {
			t.Errorf("commands = %q, want only the du", got)
		}
		if len(seen) != 2 || seen[0].Name != "run_command" || seen[0].ReadOnly {
			t.Errorf("gate saw %+v", seen)
		}
		blocked := rec.of(agent.EventToolResult)[0].(agent.ToolResultEvent)
		if !blocked.Blocked || !blocked.IsError || !strings.Contains(blocked.Output, "must_never: delete files") {
			t.Errorf("blocked result = %+v", blocked)
		}
		if got := fake.Requests()[1].ToolResults()[0].Content; !strings.Contains(got, "must_never: delete files") {
			t.Errorf("model was told %q", got)
		} else if strings.Contains(got, "TOOL OUTPUT") {
			// The refusal is the platform speaking, not untrusted tool output.
			t.Errorf("refusal reached the model fenced as data: %q", got)
		}
	})
}

func TestApprovalPausesAndResumes(t *testing.T) {
	for _, approved := range []bool{true, false} {
		name := map[bool]string{true: "approved", false: "denied"}[approved]
		forEachProvider(t, func(t *testing.T, provider string) {
			t.Run(name, func(t *testing.T) {
				cmd := &commandTool{}
				fake, cfg := setup(t, provider, cmd,
					llmfake.Reply("Restarting.", llmfake.Call{Name: "run_command", Arguments: `{"command":"systemctl restart app"}`},
						llmfake.Call{Name: "uptime", Arguments: `{}`}),
					llmfake.Text("Done."),
				)
				gateCalls := 0
				cfg.Gate = agent.GateFunc(func(_ context.Context, c agent.Call) agent.Decision {
					gateCalls++
					if c.ReadOnly {
						return agent.Allow()
					}
					return agent.NeedApproval("restarts need an operator")
				})
				rec := &recorder{}
				res := mustRun(t, cfg, ask("restart the app"), rec)
				if res.Status != agent.StatusWaitingApproval || res.Pending == nil {
					t.Fatalf("got %s (%s), want waiting_approval", res.Status, res.Reason)
				}
				if len(cmd.commands()) != 0 || len(fake.Requests()) != 1 {
					t.Fatalf("ran %q with %d model calls before approval", cmd.commands(), len(fake.Requests()))
				}
				ar := rec.of(agent.EventApprovalRequired)
				if len(ar) != 1 || ar[0].(agent.ApprovalRequired).CallID != res.Pending.Call.ID ||
					ar[0].(agent.ApprovalRequired).Reason != "restarts need an operator" {
					t.Errorf("approval.required = %+v, pending %+v", ar, res.Pending)
				}
				stored, _ := json.Marshal(res.Transcript) // what the caller persists
				var transcript []llm.Message
				if err := json.Unmarshal(stored, &transcript); err != nil {
					t.Fatal(err)
				}

				rec2 := &recorder{}
				res2, err := agent.Resume(context.Background(), cfg, transcript,
					agent.Approval{CallID: res.Pending.Call.ID, Approved: approved, Reason: "not during business hours"}, rec2.emit)
				if err != nil {
					t.Fatalf("Resume: %v", err)
				}
				if res2.Status != agent.StatusCompleted {
					t.Fatalf("resumed run: %s (%s)", res2.Status, res2.Reason)
				}
				if gateCalls != 2 { // the restart once, the uptime after resuming; the approved call is not re-checked
					t.Errorf("gate consulted %d times, want 2", gateCalls)
				}
				results := fake.Requests()[1].ToolResults()
				if len(results) != 2 {
					t.Fatalf("results sent after resuming = %+v", results)
				}
				if approved {
					if got := cmd.commands(); len(got) != 1 || got[0] != "systemctl restart app" {
						t.Errorf("commands = %q", got)
					}
				} else if len(cmd.commands()) != 0 || !strings.Contains(results[0].Content, "not during business hours") {
					t.Errorf("denied call: ran %q, model told %q", cmd.commands(), results[0].Content)
				}
				if _, err := agent.Resume(context.Background(), cfg, res2.Transcript,
					agent.Approval{CallID: res.Pending.Call.ID, Approved: true}, nil); err == nil {
					t.Errorf("second Resume of the same call accepted")
				}
			})
		})
	}
}

func TestAbandonedCallsAreClosedBeforeANewTurn(t *testing.T) {
	forEachProvider(t, func(t *testing.T, provider string) {
		fake, cfg := setup(t, provider, nil, llmfake.Text("OK, leaving it."))
		history := []llm.Message{
			{Role: llm.RoleUser, Content: "restart app"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "run_command", Arguments: json.RawMessage(`{"command":"systemctl restart app"}`)}}},
			{Role: llm.RoleUser, Content: "never mind"},
		}
		res := mustRun(t, cfg, history, &recorder{})
		if res.Status != agent.StatusCompleted {
			t.Fatalf("%s: %s", res.Status, res.Reason)
		}
		got := fake.Requests()[0].ToolResults()
		if len(got) != 1 || got[0].ToolCallID != "call_1" || !strings.Contains(got[0].Content, "did not run") {
			t.Errorf("tool results sent = %+v", got)
		}
	})
}
