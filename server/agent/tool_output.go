package agent

import (
	"context"

	"github.com/opsagent/opsagent/server/agent/llm"
)

// Refusal is an error a tool returns when the platform refused the call
// (a host's allow-list, an offline target): it did not run, and the model
// reads the reason as the platform's words, not as tool output.
type Refusal struct{ Reason string }

func (e *Refusal) Error() string { return e.Reason }

// OutputFunc receives live output of a running tool, labelled with the
// host it came from ("" for none). It is safe for concurrent use.
type OutputFunc func(host, text string, dropped bool)

type outputKey struct{}

func withToolOutput(ctx context.Context, fn OutputFunc) context.Context {
	return context.WithValue(ctx, outputKey{}, fn)
}

// ToolOutput returns where a running tool streams its output; a no-op
// when the run does not listen.
func ToolOutput(ctx context.Context) OutputFunc {
	if fn, ok := ctx.Value(outputKey{}).(OutputFunc); ok && fn != nil {
		return fn
	}
	return func(string, string, bool) {}
}

// outputEmitter emits tool.output events for one call. emit is called
// from the tool's goroutines; the runner's emit is safe for that.
func (r *run) outputEmitter(step int, c llm.ToolCall) OutputFunc {
	return func(host, text string, dropped bool) {
		r.emit(Event{Type: EventToolOutput, Data: ToolOutputEvent{Step: step, CallID: c.ID, Name: c.Name, Host: host, Text: text, Dropped: dropped}})
	}
}
