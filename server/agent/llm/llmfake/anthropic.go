package llmfake

import (
	"encoding/json"
	"errors"
	"net/http"
)

// anthropicWire speaks POST /v1/messages.
type anthropicWire struct{}

// parse also checks the headers the real API refuses to do without.
func (anthropicWire) parse(h http.Header, body []byte) (Request, error) {
	if h.Get("Anthropic-Version") == "" {
		return Request{}, errors.New("anthropic-version header is required")
	}
	var in struct {
		Model     string          `json:"model"`
		Stream    bool            `json:"stream"`
		MaxTokens int             `json:"max_tokens"`
		System    json.RawMessage `json:"system"`
		Messages  []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, err
	}
	r := Request{Model: in.Model, Stream: in.Stream, MaxTokens: in.MaxTokens}
	if r.Model == "" || r.MaxTokens <= 0 || len(in.Messages) == 0 {
		return r, errors.New("model, max_tokens and messages are required")
	}
	if len(in.System) > 0 {
		r.System = text(in.System)
	}
	for i, m := range in.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return r, errors.New("messages: role must be user or assistant")
		}
		if i > 0 && in.Messages[i-1].Role == m.Role {
			return r, errors.New("messages: roles must alternate")
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			r.Messages = append(r.Messages, Message{Role: m.Role, Content: s})
			continue
		}
		var blocks []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
			Thinking  string          `json:"thinking"`
			Signature string          `json:"signature"`
		}
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return r, err
		}
		msg := Message{Role: m.Role}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				msg.Content += b.Text
			case "thinking":
				if b.Signature == "" {
					return r, errors.New("messages: a thinking block needs its signature")
				}
				msg.Reasoning += b.Thinking
			case "tool_use":
				msg.ToolCalls = append(msg.ToolCalls, Call{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
			case "tool_result":
				r.Messages = append(r.Messages, Message{Role: "tool", ToolCallID: b.ToolUseID,
					Content: text(b.Content), IsError: b.IsError})
			}
		}
		if msg.Content != "" || len(msg.ToolCalls) > 0 || msg.Reasoning != "" {
			r.Messages = append(r.Messages, msg)
		}
	}
	for _, t := range in.Tools {
		r.Tools = append(r.Tools, t.Name)
	}
	return r, nil
}

func (anthropicWire) writeError(w http.ResponseWriter, status int, message string) {
	typ := "api_error"
	switch status {
	case http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case 529:
		typ = "overloaded_error"
	case http.StatusUnauthorized:
		typ = "authentication_error"
	case http.StatusBadRequest:
		typ = "invalid_request_error"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"type": "error", "error": map[string]any{"type": typ, "message": message},
	})
}

func stopReason(calls []Call) string {
	if len(calls) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

func anUsage(u Usage) map[string]int {
	return map[string]int{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens}
}

func (anthropicWire) writeJSON(w http.ResponseWriter, model string, t Turn, calls []Call, u Usage) {
	var content []any
	if t.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": t.Text})
	}
	for _, c := range calls {
		input := json.RawMessage(c.Arguments)
		if !json.Valid(input) {
			input = json.RawMessage("{}") // a whole JSON body cannot carry broken input
		}
		content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": input})
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": content,
		"stop_reason": stopReason(calls), "stop_sequence": nil, "usage": anUsage(u),
	})
}

// writeStream follows the documented event order: message_start (input
// usage), per block content_block_start / deltas / content_block_stop, a
// ping, message_delta (stop reason, output usage), message_stop.
func (anthropicWire) writeStream(w http.ResponseWriter, model string, t Turn, calls []Call, u Usage) {
	event := func(name string, payload map[string]any) {
		payload["type"] = name
		data, _ := json.Marshal(payload)
		sse(w, name, data)
		flush(w)
	}
	event("message_start", map[string]any{"message": map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": u.InputTokens, "output_tokens": 1},
	}})
	index := 0
	if t.Reasoning != "" {
		// Extended thinking: a thinking block, its text in thinking_delta
		// events, then a signature_delta before content_block_stop.
		event("content_block_start", map[string]any{"index": index,
			"content_block": map[string]any{"type": "thinking", "thinking": ""}})
		for _, p := range textPieces(t.Reasoning) {
			event("content_block_delta", map[string]any{"index": index,
				"delta": map[string]any{"type": "thinking_delta", "thinking": p}})
		}
		event("content_block_delta", map[string]any{"index": index,
			"delta": map[string]any{"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}})
		event("content_block_stop", map[string]any{"index": index})
		index++
	}
	if t.Text != "" {
		event("content_block_start", map[string]any{"index": index,
			"content_block": map[string]any{"type": "text", "text": ""}})
		event("ping", map[string]any{})
		for _, p := range textPieces(t.Text) {
			event("content_block_delta", map[string]any{"index": index,
				"delta": map[string]any{"type": "text_delta", "text": p}})
		}
		event("content_block_stop", map[string]any{"index": index})
		index++
	}
	for _, c := range calls {
		event("content_block_start", map[string]any{"index": index, "content_block": map[string]any{
			"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		for _, p := range argPieces(c.Arguments) {
			event("content_block_delta", map[string]any{"index": index,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
		}
		event("content_block_stop", map[string]any{"index": index})
		index++
	}
	event("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": stopReason(calls), "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": u.OutputTokens},
	})
	event("message_stop", map[string]any{})
}
