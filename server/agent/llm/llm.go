// Package llm is the one narrow door between the agent loop and language
// model providers. The loop speaks only the types in this file; each provider
// translates them to its documented wire format (wire.go), so a new
// provider never changes the loop.
package llm

import (
	"context"
	"encoding/json"
)

// Provider streams one model turn. onDelta is called, in order and from the
// calling goroutine, with each piece of assistant text as it arrives; the
// returned Response holds the complete turn. Implementations returned by New
// retry transient failures themselves, but only before the first delta, so a
// caller never sees text twice.
type Provider interface {
	Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error)
}

// Role says who wrote a Message.
type Role string

// The roles a conversation carries. System text travels in Request.System,
// not as a message, because providers disagree on where it goes.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Request is one call to the model: the whole conversation so far.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int // 0 leaves the provider's default (Anthropic requires one: 4096 then)
}

// Message is one entry of a conversation. An assistant message may carry
// ToolCalls; each is answered by a RoleTool message whose ToolCallID names it.
type Message struct {
	Role       Role       `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	// IsError marks a tool result that reports a failure (Anthropic sends it
	// as is_error; OpenAI has no such flag and reads it from the text).
	IsError bool `json:"is_error,omitempty"`
	// Platform marks a tool result the platform wrote itself (a refusal by
	// the team's rules or an operator, a malformed call): it reaches the
	// model as an instruction, not fenced like untrusted tool output.
	Platform bool `json:"platform,omitempty"`
	// Reasoning is the model's thinking before it answered (<think> text,
	// reasoning_content, Anthropic thinking blocks), kept for the
	// transcript. It is never the answer and is not sent back, except to
	// Anthropic when ReasoningSignature is set: its API requires a signed
	// thinking block to accompany the tool calls that followed it.
	Reasoning          string `json:"reasoning,omitempty"`
	ReasoningSignature string `json:"reasoning_signature,omitempty"`
}

// ToolCall is the model's request to run one tool. Arguments is the JSON text
// the model produced, assembled from streamed pieces; it is not validated here.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolSpec describes a tool to the model. Parameters is a JSON Schema object
// ({"type":"object","properties":...}); nil means "no arguments".
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// Usage counts tokens. InputTokens includes prompt-cache reads and writes.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	// Estimated marks counts this server made itself (EstimateRequest)
	// because the provider's stream reported none; a sum is estimated when
	// any part is.
	Estimated bool `json:"estimated,omitempty"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{InputTokens: u.InputTokens + o.InputTokens, OutputTokens: u.OutputTokens + o.OutputTokens,
		Estimated: u.Estimated || o.Estimated}
}

// Total is input plus output tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// Response is one complete model turn.
type Response struct {
	Content   string
	ToolCalls []ToolCall
	Usage     Usage
	// StopReason is the provider's own word (OpenAI "stop", "tool_calls",
	// "length"; Anthropic "end_turn", "tool_use", "max_tokens"), kept for logs.
	StopReason string
	// Reasoning is the thinking that came with the turn, never part of
	// Content; ReasoningSignature is Anthropic's signature over it.
	Reasoning          string
	ReasoningSignature string
	// Model is the model that answered (a fallback's, after a failover);
	// empty means the requested one.
	Model string
	// Failovers lists the models that failed before Model answered.
	Failovers []Failover
}

// Delta is a piece of streamed assistant text.
type Delta struct {
	Text string
}
