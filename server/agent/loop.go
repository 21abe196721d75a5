package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm"
)

// run is the state of one Run or Resume call.
type run struct {
	cfg        Config
	emit       func(Event)
	system     string
	approval   *Approval
	msgs       []llm.Message     // the transcript, tool output in full
	view       []llm.Message     // the same as the model sees it, built once per message
	callNames  map[string]string // tool call id -> tool name, to label fenced results
	usage      llm.Usage
	cost       float64
	steps      int
	modelState // context window, output checks (context.go, output.go)
}

func (r *run) append(m llm.Message) {
	for _, c := range m.ToolCalls {
		r.callNames[c.ID] = c.Name
	}
	r.msgs = append(r.msgs, m)
	r.view = append(r.view, viewOf(m, r.callNames[m.ToolCallID], r.resultBudget()))
}

func (r *run) loop(ctx context.Context) Result {
	if open := openCalls(r.msgs); len(open) > 0 {
		if res, stop := r.runCalls(ctx, r.steps, open, false); stop {
			return res
		}
	}
	for {
		if ctx.Err() != nil {
			return r.stopped(ctx, nil)
		}
		if r.steps >= r.cfg.MaxSteps {
			return r.finish(StatusFailed, CodeMaxSteps, fmt.Sprintf(
				"stopped after %d model calls without a final answer (step limit)", r.cfg.MaxSteps), nil)
		}
		if r.cfg.Budget != nil {
			if err := r.cfg.Budget.Allow(r.usage, r.cost); err != nil {
				return r.finish(StatusFailed, CodeBudget, "budget exceeded: "+err.Error(), err)
			}
		}
		r.steps++
		step := r.steps
		resp, err := r.ask(ctx, step, func(d llm.Delta) {
			r.emit(Event{Type: EventMessageDelta, Data: MessageDelta{Step: step, Text: d.Text}})
		})
		if err != nil {
			if ctx.Err() != nil {
				return r.stopped(ctx, err)
			}
			code := string(llm.ClassOf(err))
			if code == "" {
				code = "llm_error"
			}
			return r.finish(StatusFailed, code, "LLM request failed: "+err.Error(), err)
		}
		calls := r.uniqueIDs(resp.ToolCalls, step)
		r.append(llm.Message{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: calls,
			Reasoning: resp.Reasoning, ReasoningSignature: resp.ReasoningSignature})
		r.emit(Event{Type: EventMessage, Data: MessageEvent{Step: step, Content: resp.Content, ToolCalls: calls,
			Reasoning: resp.Reasoning, Model: r.answeredBy(resp)}})
		r.usage = r.usage.Add(resp.Usage)
		r.cost += r.cfg.Prices.Cost(r.answeredBy(resp), resp.Usage)
		r.emit(Event{Type: EventUsage, Data: UsageEvent{Step: step, Usage: resp.Usage, Total: r.usage, Cost: r.cost,
			Model: r.answeredBy(resp)}})
		r.checkpoint(ctx, nil)
		if len(calls) == 0 {
			return r.finish(StatusCompleted, "", "", nil)
		}
		if res, stop := r.runCalls(ctx, step, calls, true); stop {
			return res
		}
	}
}

// runCalls answers calls in order. It stops the run (true) when a call needs
// approval or the context ends; calls after that point stay open.
func (r *run) runCalls(ctx context.Context, step int, calls []llm.ToolCall, announce bool) (Result, bool) {
	for _, c := range calls {
		if announce {
			r.emit(Event{Type: EventToolCall, Data: ToolCallEvent{Step: step, CallID: c.ID, Name: c.Name, Arguments: c.Arguments}})
		}
		if ctx.Err() != nil {
			return r.stopped(ctx, nil), true
		}
		if r.interrupted(c) {
			r.answer(step, c, InterruptedOutcome, true, false, false, true, 0)
			continue
		}
		if r.special(step, c) { // get_tool_output, or a call the output checks refused
			continue
		}
		tool, err := r.cfg.Tools.validate(c.Name, c.Arguments)
		if err != nil {
			r.invalidCall(step, c, err)
			continue
		}
		call := Call{ID: c.ID, Name: c.Name, Arguments: c.Arguments, ReadOnly: tool.ReadOnly()}
		d := r.decide(ctx, call)
		switch d.Verdict {
		case VerdictAllow:
			if !call.ReadOnly {
				if r.checkpoint(ctx, &call); ctx.Err() != nil {
					return r.stopped(ctx, nil), true // stopped before the call: a resumed run asks again
				}
			}
			started := time.Now()
			out, err := r.runTool(withToolOutput(ctx, r.outputEmitter(step, c)), tool, call)
			var refused *Refusal
			switch {
			case errors.As(err, &refused):
				r.answer(step, c, "error: this call was refused and did not run: "+refused.Reason, true, true, false, true, time.Since(started))
			case err != nil:
				r.answer(step, c, "error: "+err.Error(), true, false, false, false, time.Since(started))
			default:
				r.answer(step, c, out, false, false, true, false, time.Since(started))
			}
		case VerdictNeedApproval:
			r.emit(Event{Type: EventApprovalRequired, Data: ApprovalRequired{
				Step: step, CallID: c.ID, Name: c.Name, Arguments: c.Arguments, Reason: d.Reason}})
			res := r.finish(StatusWaitingApproval, "", fmt.Sprintf("approval required for %s: %s", c.Name, d.Reason), nil)
			res.Pending = &Pending{Step: step, Call: call, Reason: d.Reason}
			return res, true
		default: // VerdictBlock, and any verdict this code does not know
			r.answer(step, c, "error: this call was refused and did not run: "+d.Reason, true, true, false, true, 0)
		}
	}
	return r.invalidLimit(step)
}

// decide applies a human's approval to its call, else asks the Gate.
func (r *run) decide(ctx context.Context, call Call) Decision {
	if a := r.approval; a != nil && a.CallID == call.ID {
		r.approval = nil
		if a.Approved {
			return Allow()
		}
		// The reason says why (an operator's comment, or that nobody approved in time).
		reason := "not approved"
		if a.Reason != "" {
			reason += ": " + a.Reason
		}
		return Block(reason)
	}
	if r.cfg.Gate == nil {
		return Allow()
	}
	d := r.cfg.Gate.Check(ctx, call)
	if d.Verdict != VerdictAllow && d.Reason == "" {
		d.Reason = "no reason given"
	}
	return d
}

// runTool runs one tool, turning a panic into an error result: a broken
// tool must not take the server down.
func (r *run) runTool(ctx context.Context, tool Tool, call Call) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.cfg.Logger.LogAttrs(ctx, slog.LevelError, "agent tool panicked",
				slog.String("tool", call.Name), slog.Any("panic", p))
			out, err = "", fmt.Errorf("tool %s failed internally", call.Name)
		}
	}()
	return tool.Run(ctx, call.Arguments)
}

// answer appends a tool result and emits it. Only real tool output
// (fromTool) can be truncated for the model; platform text (a refusal, a
// malformed call) is the platform speaking and is not fenced as data.
func (r *run) answer(step int, c llm.ToolCall, text string, isErr, blocked, fromTool, platform bool, took time.Duration) {
	r.append(llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: text, IsError: isErr, Platform: platform})
	r.emit(Event{Type: EventToolResult, Data: ToolResultEvent{
		Step: step, CallID: c.ID, Name: c.Name, Output: text, IsError: isErr, Blocked: blocked,
		Truncated: fromTool && len(text) > r.resultBudget(), DurationMS: took.Milliseconds(),
	}})
	r.checkpoint(context.Background(), nil)
}

// stopped ends a run whose context is done: timeout on a deadline,
// cancelled otherwise.
func (r *run) stopped(ctx context.Context, cause error) Result {
	if cause == nil {
		cause = ctx.Err()
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return r.finish(StatusTimeout, CodeTimeout, "the run exceeded its time limit", cause)
	}
	return r.finish(StatusCancelled, CodeCancelled, "the run was cancelled", cause)
}

func (r *run) finish(status Status, code, reason string, cause error) Result {
	if status != StatusCompleted && status != StatusWaitingApproval {
		r.emit(Event{Type: EventError, Data: ErrorEvent{Code: code, Message: reason}})
	}
	r.emit(Event{Type: EventDone, Data: Done{Status: status, Reason: reason, Steps: r.steps, Usage: r.usage, Cost: r.cost}})
	return Result{Status: status, Reason: reason, Code: code, Steps: r.steps, Usage: r.usage, Cost: r.cost,
		Transcript: r.msgs, Err: cause, LearnedContextWindow: r.win.learned}
}

func (r *run) modelName() string {
	if r.cfg.Model != "" {
		return r.cfg.Model
	}
	if n, ok := r.cfg.Provider.(interface{ Model() string }); ok {
		return n.Model()
	}
	return ""
}

// uniqueIDs gives every call a distinct id: some local servers send none or
// repeat one, and results are matched to calls by id. A repeated id is
// remembered, so the call is answered as the mistake it is (output.go).
func (r *run) uniqueIDs(calls []llm.ToolCall, step int) []llm.ToolCall {
	seen := make(map[string]bool, len(calls))
	for i := range calls {
		if calls[i].ID != "" && seen[calls[i].ID] {
			r.noteDuplicate(fmt.Sprintf("call_s%d_%d", step, i), calls[i].ID)
		}
		if calls[i].ID == "" || seen[calls[i].ID] {
			calls[i].ID = fmt.Sprintf("call_s%d_%d", step, i)
		}
		seen[calls[i].ID] = true
		if len(calls[i].Arguments) == 0 {
			calls[i].Arguments = json.RawMessage("{}")
		}
	}
	return calls
}

// openCalls returns the tool calls of the last assistant message that no
// later tool message answers, provided only tool messages follow it.
func openCalls(msgs []llm.Message) []llm.ToolCall {
	i := len(msgs) - 1
	for i >= 0 && msgs[i].Role == llm.RoleTool {
		i--
	}
	if i < 0 || msgs[i].Role != llm.RoleAssistant {
		return nil
	}
	answered := map[string]bool{}
	for _, m := range msgs[i+1:] {
		answered[m.ToolCallID] = true
	}
	var open []llm.ToolCall
	for _, c := range msgs[i].ToolCalls {
		if !answered[c.ID] {
			open = append(open, c)
		}
	}
	return open
}

// closeAbandoned answers, with an error result, tool calls that a later
// non-tool message left behind (a user who wrote on instead of approving):
// both providers reject a history with unanswered calls.
func closeAbandoned(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, 0, len(msgs))
	var open []llm.ToolCall
	flush := func() {
		for _, c := range open {
			out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, IsError: true, Platform: true,
				Content: "error: this call did not run; the conversation continued without a decision on it"})
		}
		open = nil
	}
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleTool:
			for j, c := range open {
				if c.ID == m.ToolCallID {
					open = append(open[:j:j], open[j+1:]...)
					break
				}
			}
		default:
			flush()
		}
		out = append(out, m)
		if m.Role == llm.RoleAssistant {
			open = append([]llm.ToolCall(nil), m.ToolCalls...)
		}
	}
	return out // calls still open at the end are the ones Run and Resume answer
}
