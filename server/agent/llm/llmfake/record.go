package llmfake

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Request is one recorded request, decoded from either wire format into the
// same shape so assertions need not care which provider sent it.
type Request struct {
	Path     string      // "/v1/chat/completions" or "/v1/messages"
	Header   http.Header // as received, API key included (the fake's own)
	Body     []byte      // raw JSON
	Model    string
	Stream   bool
	System   string
	Messages []Message
	Tools    []string // tool names offered
	// MaxTokens is max_completion_tokens, max_tokens (OpenAI) or max_tokens (Anthropic).
	MaxTokens int
	// Tokens is the fake's count of the prompt (countTokens); Truncated
	// says an Ollama-like fake dropped its start to fit the context.
	Tokens    int
	Truncated bool
}

// Message is one message of a recorded request. Anthropic tool_result
// blocks become Role "tool" messages, as in OpenAI's format.
type Message struct {
	Role       string
	Content    string
	ToolCallID string
	ToolCalls  []Call
	IsError    bool
	Reasoning  string // an Anthropic thinking block sent back
}

// Text is everything the model was shown, decoded: system prompt, message
// contents and tool-call arguments. Search it, not Body, for strings that
// must (not) have reached the model: JSON escaping hides them in Body.
func (r Request) Text() string {
	var b strings.Builder
	b.WriteString(r.System)
	for _, m := range r.Messages {
		b.WriteString("\n")
		b.WriteString(m.Reasoning)
		b.WriteString(m.Content)
		for _, c := range m.ToolCalls {
			b.WriteString("\n")
			b.WriteString(c.Arguments)
		}
	}
	return b.String()
}

// ToolResults returns the tool-role messages, in order.
func (r Request) ToolResults() []Message {
	var out []Message
	for _, m := range r.Messages {
		if m.Role == "tool" {
			out = append(out, m)
		}
	}
	return out
}

// text reads a content field that is either a string or a list of blocks
// with "text" (both providers allow both).
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &blocks)
	var b strings.Builder
	for _, bl := range blocks {
		b.WriteString(bl.Text)
	}
	return b.String()
}
