package llmfake

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"
)

// openAIWire speaks POST /v1/chat/completions.
type openAIWire struct{ s *Server }

func (openAIWire) parse(_ http.Header, body []byte) (Request, error) {
	var in struct {
		Model               string `json:"model"`
		Stream              bool   `json:"stream"`
		MaxTokens           int    `json:"max_tokens"`
		MaxCompletionTokens int    `json:"max_completion_tokens"`
		Messages            []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, err
	}
	r := Request{Model: in.Model, Stream: in.Stream, MaxTokens: max(in.MaxTokens, in.MaxCompletionTokens)}
	if r.Model == "" || len(in.Messages) == 0 {
		return r, errors.New("model and messages are required")
	}
	for _, m := range in.Messages {
		if m.Role == "system" || m.Role == "developer" {
			r.System += text(m.Content)
			continue
		}
		msg := Message{Role: m.Role, Content: text(m.Content), ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, Call{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		r.Messages = append(r.Messages, msg)
	}
	for _, t := range in.Tools {
		r.Tools = append(r.Tools, t.Function.Name)
	}
	return r, nil
}

func (openAIWire) writeError(w http.ResponseWriter, status int, message string) {
	typ := "server_error"
	switch {
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_exceeded"
	case status < 500:
		typ = "invalid_request_error"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"error": map[string]any{"message": message, "type": typ, "param": nil, "code": nil},
	})
}

type oaToolCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func oaUsage(u Usage) map[string]int {
	return map[string]int{"prompt_tokens": u.InputTokens, "completion_tokens": u.OutputTokens,
		"total_tokens": u.InputTokens + u.OutputTokens}
}

func finishReason(calls []Call) string {
	if len(calls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

func (openAIWire) writeJSON(w http.ResponseWriter, model string, t Turn, calls []Call, u Usage) {
	msg := map[string]any{"role": "assistant", "content": t.Text}
	if len(calls) > 0 {
		var tcs []oaToolCall
		for i, c := range calls {
			tc := oaToolCall{Index: i, ID: c.ID, Type: "function"}
			tc.Function.Name, tc.Function.Arguments = c.Name, c.Arguments
			tcs = append(tcs, tc)
		}
		msg["tool_calls"] = tcs
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finishReason(calls)}},
		"usage":   oaUsage(u),
	})
}

// writeStream sends the role, each text piece, each call's id and name then
// its arguments in pieces, the finish reason, a usage-only chunk (as with
// stream_options.include_usage) and [DONE].
//
// The dialects differ as documented: llama.cpp and vLLM stream reasoning as
// reasoning_content deltas; Ollama sends each tool call whole in one chunk
// (id, index, all its arguments) where the others stream the arguments in
// pieces; llama.cpp puts usage (and its timings) on the finishing chunk.
func (o openAIWire) writeStream(w http.ResponseWriter, model string, t Turn, calls []Call, u Usage) {
	d := OpenAI
	if o.s != nil {
		o.s.mu.Lock()
		d = o.s.dialect
		o.s.mu.Unlock()
	}
	created := time.Now().Unix()
	chunk := func(delta map[string]any, finish any) {
		data, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})
		sse(w, "", data)
		flush(w)
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, p := range textPieces(t.Reasoning) {
		field := "reasoning_content"
		if d == Ollama {
			field = "reasoning"
		}
		chunk(map[string]any{field: p}, nil)
	}
	for _, p := range textPieces(t.Text) {
		chunk(map[string]any{"content": p}, nil)
	}
	for i, c := range calls {
		if d == Ollama {
			whole := oaToolCall{Index: i, ID: c.ID, Type: "function"}
			whole.Function.Name, whole.Function.Arguments = c.Name, c.Arguments
			chunk(map[string]any{"role": "assistant", "content": "", "tool_calls": []oaToolCall{whole}}, nil)
			continue
		}
		head := oaToolCall{Index: i, ID: c.ID, Type: "function"}
		head.Function.Name = c.Name
		chunk(map[string]any{"tool_calls": []oaToolCall{head}}, nil)
		for _, p := range argPieces(c.Arguments) {
			part := oaToolCall{Index: i}
			part.Function.Arguments = p
			chunk(map[string]any{"tool_calls": []oaToolCall{part}}, nil)
		}
	}
	if d == LlamaCpp && !t.NoUsage {
		data, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finishReason(calls)}},
			"usage":   oaUsage(u), "timings": map[string]any{"prompt_n": u.InputTokens, "predicted_n": u.OutputTokens},
		})
		sse(w, "", data)
	} else {
		chunk(map[string]any{}, finishReason(calls))
		if !t.NoUsage {
			data, _ := json.Marshal(map[string]any{
				"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": created, "model": model,
				"choices": []any{}, "usage": oaUsage(u),
			})
			sse(w, "", data)
		}
	}
	sse(w, "", []byte("[DONE]"))
	flush(w)
}
