package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/opsagent/opsagent/server/agent/llm"
)

// summarySystem asks for a summary that lets the investigation go on.
const summarySystem = "You compress the earlier part of an operations investigation so it can continue in a " +
	"small context window. Write a factual summary: what was asked, which commands and tools ran with their " +
	"exit codes and key findings (numbers, names, errors verbatim), what was ruled out, and what remained open. " +
	"Keep every call_id that a later step may need to read back. No advice, no preamble."

// summaryPrefix opens the message that replaces the summarized turns.
const summaryPrefix = "[Summary of the earlier part of this conversation, written by the platform to fit the " +
	"model's context window; the full record stays in the session transcript, and any tool result can still be " +
	"read with get_tool_output(call_id).]\n"

// summarize replaces every message between the first user message and the
// latest step with a summary written by a model call of its own, costed
// like any step and reported as a context event.
func (r *run) summarize(ctx context.Context, step, budget int) error {
	first, last := -1, -1
	for i, m := range r.view {
		if r.win.omitted[i] {
			continue
		}
		if first < 0 && m.Role == llm.RoleUser {
			first = i
		}
		if m.Role == llm.RoleAssistant {
			last = i
		}
	}
	var span []int
	for i := first + 1; first >= 0 && i < last; i++ {
		if !r.win.omitted[i] {
			span = append(span, i)
		}
	}
	if len(span) < 2 {
		return nil // nothing worth summarizing: the caller reports the overflow
	}
	text := r.renderForSummary(span, budget)
	answer := min(r.win.reserve, 1024)
	resp, err := r.cfg.Provider.Stream(ctx, llm.Request{Model: r.cfg.Model, System: summarySystem, MaxTokens: answer,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}, nil)
	if err != nil {
		return fmt.Errorf("summarizing earlier turns to fit the context window failed: %w", err)
	}
	cost := r.cfg.Prices.Cost(r.answeredBy(resp), resp.Usage)
	r.usage = r.usage.Add(resp.Usage)
	r.cost += cost
	summary := strings.TrimSpace(resp.Content)
	if summary == "" {
		summary = "(the summary came back empty)"
	}
	r.view[span[0]] = llm.Message{Role: llm.RoleUser, Content: summaryPrefix + summary}
	r.win.summary[span[0]] = true
	for _, i := range span[1:] {
		r.win.omitted[i] = true
	}
	u := resp.Usage
	r.emit(Event{Type: EventContext, Data: ContextEvent{Step: step, Action: "summarized", Summarized: len(span),
		Window: r.win.size, Reserve: r.win.reserve, Usage: &u, Cost: cost, Model: r.answeredBy(resp),
		Message: summary}})
	r.emit(Event{Type: EventUsage, Data: UsageEvent{Step: step, Usage: resp.Usage, Total: r.usage, Cost: r.cost}})
	return nil
}

// renderForSummary writes the span as plain text for the summarizer, as
// the model saw it (tool results compacted), cut in the middle to fit.
func (r *run) renderForSummary(span []int, budget int) string {
	var b strings.Builder
	for _, i := range span {
		m := r.view[i]
		switch m.Role {
		case llm.RoleUser:
			fmt.Fprintf(&b, "USER: %s\n", m.Content)
		case llm.RoleAssistant:
			if m.Content != "" {
				fmt.Fprintf(&b, "ASSISTANT: %s\n", m.Content)
			}
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "ASSISTANT CALLED %s %s (call_id %s)\n", c.Name, c.Arguments, c.ID)
			}
		case llm.RoleTool:
			fmt.Fprintf(&b, "RESULT of call_id %s:\n%s\n", m.ToolCallID, m.Content)
		}
	}
	s := b.String()
	room := budget - llm.EstimateTokens(summarySystem) - min(r.win.reserve, 1024) - 64
	for room > 0 && llm.EstimateTokens(s) > room && len(s) > 200 {
		keep := len(s) * 3 / 4 / 2
		s = cutBack(s, keep) + "\n[... middle omitted ...]\n" + s[cutForward(s, len(s)-keep):]
	}
	return s
}

// answeredBy is the model that wrote resp, for pricing.
func (r *run) answeredBy(resp llm.Response) string {
	if resp.Model != "" {
		return resp.Model
	}
	return r.modelName()
}
