package agent

import (
	"encoding/json"

	"github.com/opsagent/opsagent/server/agent/llm"
)

// EventType names an event; the lead streams it as the SSE "event:" field
// and the payload, JSON-encoded, as "data:".
type EventType string

// The events a run emits, in the order they can occur within a step:
// message.delta*, message, usage, then per tool call tool.call and
// tool.result (or approval.required); finally exactly one done, preceded
// by error when the run failed, timed out or was cancelled.
const (
	EventMessageDelta     EventType = "message.delta"     // MessageDelta
	EventMessage          EventType = "message"           // MessageEvent
	EventToolCall         EventType = "tool.call"         // ToolCallEvent
	EventToolResult       EventType = "tool.result"       // ToolResultEvent
	EventToolOutput       EventType = "tool.output"       // ToolOutputEvent, live output before tool.result
	EventApprovalRequired EventType = "approval.required" // ApprovalRequired
	EventUsage            EventType = "usage"             // UsageEvent
	EventDone             EventType = "done"              // Done
	EventError            EventType = "error"             // ErrorEvent
)

// Event is one thing that happened. Data is the payload struct named
// beside the EventType constant.
type Event struct {
	Type EventType `json:"type"`
	Data any       `json:"data"`
}

// MessageDelta is a piece of assistant text as the model streams it.
type MessageDelta struct {
	Step int    `json:"step"`
	Text string `json:"text"`
}

// MessageEvent is the complete assistant message of a step.
type MessageEvent struct {
	Step      int            `json:"step"`
	Content   string         `json:"content"`
	ToolCalls []llm.ToolCall `json:"tool_calls,omitempty"`
	// Reasoning is the model's thinking before the answer; never the answer.
	Reasoning string `json:"reasoning,omitempty"`
	Model     string `json:"model,omitempty"` // the model that answered
}

// ToolCallEvent announces a tool call the model made, before any check.
type ToolCallEvent struct {
	Step      int             `json:"step"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolResultEvent is the outcome of one call. Output is the full text, even
// when the model was shown a truncated copy (Truncated).
type ToolResultEvent struct {
	Step       int    `json:"step"`
	CallID     string `json:"call_id"`
	Name       string `json:"name"`
	Output     string `json:"output"`
	IsError    bool   `json:"is_error"`
	Blocked    bool   `json:"blocked,omitempty"` // refused by the Gate or an operator
	Truncated  bool   `json:"truncated,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}

// ToolOutputEvent is a piece of a running tool's output as it arrives
// (run_command on connectors), between tool.call and tool.result. The
// pieces of one call, in order, are its live output; secrets are masked.
// The stream is capped per call: past the cap one event with Dropped set
// says how much was left out, and tool.result carries the head and tail.
type ToolOutputEvent struct {
	Step    int    `json:"step"`
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	Host    string `json:"host,omitempty"` // the connector that sent it
	Text    string `json:"text"`
	Dropped bool   `json:"dropped,omitempty"`
}

// ApprovalRequired says the run stopped for a human decision on CallID.
type ApprovalRequired struct {
	Step      int             `json:"step"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Reason    string          `json:"reason"`
}

// UsageEvent reports tokens after each model call: the step's and the
// run's running totals.
type UsageEvent struct {
	Step  int       `json:"step"`
	Usage llm.Usage `json:"usage"`
	Total llm.Usage `json:"total"`
	Cost  float64   `json:"cost"` // running total, USD
	Model string    `json:"model,omitempty"`
}

// ErrorEvent explains a failed, timed-out or cancelled run. Code is an
// llm.ErrorClass for provider failures, else one of the Code* constants.
type ErrorEvent struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Done is the last event of every run.
type Done struct {
	Status Status    `json:"status"`
	Reason string    `json:"reason,omitempty"`
	Steps  int       `json:"steps"`
	Usage  llm.Usage `json:"usage"`
	Cost   float64   `json:"cost"`
}

// EventContext reports what the run did to stay inside the model's context
// window (ContextEvent).
const EventContext EventType = "context"

// ContextEvent is one act of context keeping. Action is "compacted" (tool
// results shortened), "summarized" (earlier turns replaced by a summary
// written by a model call, whose Usage and Cost are here and counted in the
// run's) or "overflow_retry" (the server refused the request as too long;
// it is compacted further and sent once more).
type ContextEvent struct {
	Step         int        `json:"step"`
	Action       string     `json:"action"`
	Compacted    int        `json:"compacted,omitempty"`
	Summarized   int        `json:"summarized,omitempty"`
	TokensBefore int        `json:"tokens_before,omitempty"`
	TokensAfter  int        `json:"tokens_after,omitempty"`
	Window       int        `json:"window"`
	Reserve      int        `json:"reserve"`
	Usage        *llm.Usage `json:"usage,omitempty"`
	Cost         float64    `json:"cost,omitempty"`
	Model        string     `json:"model,omitempty"`
	Message      string     `json:"message,omitempty"`
}
