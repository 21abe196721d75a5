package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// openAIChat speaks OpenAI chat completions (POST {base}/chat/completions
// with "stream": true), the dialect Ollama, llama.cpp and vLLM also serve.
type openAIChat struct {
	hc      *http.Client
	url     string
	apiKey  string
	headers http.Header
	// textCalls recognises tool calls written into the answer (textcalls.go).
	textCalls bool
}

func newOpenAI(cfg Config) *openAIChat {
	base := cfg.BaseURL
	if base == "" {
		base = "https://api.openai.com/v1"
	}
	// Only what Config says: no OPENAI_* variable is read, this server has its own.
	textCalls := IsLocalURL(cfg.BaseURL)
	if cfg.TextToolCalls != nil {
		textCalls = *cfg.TextToolCalls
	}
	return &openAIChat{hc: cfg.HTTPClient, url: joinURL(base, "chat/completions"), apiKey: cfg.APIKey, textCalls: textCalls}
}

// The request body, as documented for POST /v1/chat/completions.
type oaRequest struct {
	Model               string          `json:"model"`
	Messages            []oaMessage     `json:"messages"`
	Stream              bool            `json:"stream"`
	StreamOptions       oaStreamOptions `json:"stream_options"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	Tools               []oaTool        `json:"tools,omitempty"`
}

type oaStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type oaMessage struct {
	Role string `json:"role"`
	// Content is a pointer so an assistant turn that only calls tools sends
	// no content rather than an empty string some servers reject.
	Content    *string      `json:"content,omitempty"`
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

type oaToolCall struct {
	Index    *int   `json:"index,omitempty"` // set in stream chunks only
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// oaChunk is one "chat.completion.chunk"; fields we do not use are skipped.
type oaChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   string       `json:"content"`
			ToolCalls []oaToolCall `json:"tool_calls"`
			// llama.cpp (--reasoning-format deepseek), vLLM's reasoning
			// parsers and DeepSeek's API stream thinking apart from content;
			// newer vLLM and Ollama name the field "reasoning".
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	// Error is how OpenAI reports a failure after the 200 went out.
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	} `json:"error"`
}

func (p *openAIChat) attempt(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	body := oaRequest{Model: req.Model, Messages: openAIMessages(req), Stream: true,
		StreamOptions: oaStreamOptions{IncludeUsage: true}, MaxCompletionTokens: max(req.MaxTokens, 0)}
	for _, t := range req.Tools {
		body.Tools = append(body.Tools, openAIFunction(t))
	}
	h := http.Header{}
	if p.apiKey != "" {
		h.Set("Authorization", "Bearer "+p.apiKey)
	}
	resp, err := post(ctx, p.hc, ProviderOpenAI, p.url, h, body)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()

	var (
		content   strings.Builder
		reasoning strings.Builder
		filter    = deltaFilter{textCalls: p.textCalls}
		gotUsage  bool
		calls     openAIToolCalls
		out       Response
		chunks    int
		events    = newSSEReader(resp.Body)
	)
	for {
		ev, err := events.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Response{}, err
		}
		if string(ev.Data) == "[DONE]" {
			break
		}
		var chunk oaChunk
		if err := json.Unmarshal(ev.Data, &chunk); err != nil {
			return Response{}, badResponse(ProviderOpenAI, "a stream chunk is not JSON", err)
		}
		if chunk.Error != nil {
			return Response{}, openAIStreamError(chunk.Error.Type, chunk.Error.Message)
		}
		chunks++
		if chunk.Usage != nil {
			out.Usage = Usage{InputTokens: chunk.Usage.PromptTokens, OutputTokens: chunk.Usage.CompletionTokens}
			gotUsage = true
		}
		for _, choice := range chunk.Choices {
			if choice.Index != 0 {
				continue // we never ask for n > 1
			}
			reasoning.WriteString(choice.Delta.ReasoningContent)
			reasoning.WriteString(choice.Delta.Reasoning)
			if choice.Delta.Content != "" {
				content.WriteString(choice.Delta.Content)
				if shown := filter.feed(choice.Delta.Content); shown != "" {
					onDelta(Delta{Text: shown})
				}
			}
			for _, tc := range choice.Delta.ToolCalls {
				calls.add(tc)
			}
			if choice.FinishReason != "" {
				out.StopReason = choice.FinishReason
			}
		}
	}
	if chunks == 0 {
		return Response{}, badResponse(ProviderOpenAI, "the response held no chat completion chunks", nil)
	}
	if out.StopReason == "" {
		return Response{}, &Error{Class: ClassNetwork, Provider: ProviderOpenAI,
			Message: "the stream ended before the completion finished"}
	}
	answer, thought := splitThink(content.String())
	out.Reasoning = strings.TrimSpace(reasoning.String())
	if thought != "" {
		out.Reasoning = strings.TrimSpace(out.Reasoning + "\n\n" + thought)
	}
	out.ToolCalls = calls.finish()
	if p.textCalls && len(out.ToolCalls) == 0 {
		answer, out.ToolCalls = textToolCalls(answer)
	}
	out.Content = answer
	if filter.held && len(out.ToolCalls) == 0 && answer != "" {
		onDelta(Delta{Text: answer}) // held back as a possible call; it was an answer after all
	}
	if !gotUsage {
		// Some servers (older Ollama, llama.cpp builds, proxies) ignore
		// stream_options.include_usage; the count is then ours, and says so.
		out.Usage = estimatedUsage(req, out)
	}
	return out, nil
}

// estimatedUsage counts a turn the server did not count.
func estimatedUsage(req Request, out Response) Usage {
	n := EstimateTokens(out.Content) + EstimateTokens(out.Reasoning)
	for _, c := range out.ToolCalls {
		n += EstimateMessage(Message{ToolCalls: []ToolCall{c}})
	}
	return Usage{InputTokens: EstimateRequest(req), OutputTokens: n, Estimated: true}
}

// openAIStreamError classifies an error sent inside a 200 stream, where no
// status exists: its type says whether another attempt may succeed.
func openAIStreamError(typ, msg string) *Error {
	class := ClassServer
	switch {
	case strings.Contains(typ, "rate_limit") || typ == "requests" || typ == "tokens":
		class = ClassRateLimit
	case strings.Contains(typ, "invalid_request"):
		class = ClassBadRequest
	}
	if msg == "" {
		msg = typ
	}
	return &Error{Class: class, Provider: ProviderOpenAI, Message: clip(msg, maxMessage)}
}

// openAIToolCalls assembles tool calls whose id, name and argument text
// arrive spread over chunks, keyed by the index the server gives them.
type openAIToolCalls struct {
	calls []ToolCall
	index []int
	args  [][]byte
}

func (c *openAIToolCalls) add(tc oaToolCall) {
	idx := 0
	if tc.Index != nil {
		idx = *tc.Index
	}
	i := -1
	for j := len(c.index) - 1; j >= 0; j-- {
		if c.index[j] == idx {
			i = j
			break
		}
	}
	// Some servers (older Ollama) send every call whole with index 0; a new
	// id at a used index is then a new call, not a continuation.
	if i >= 0 && tc.ID != "" && c.calls[i].ID != "" && tc.ID != c.calls[i].ID {
		i = -1
	}
	if i < 0 {
		c.calls = append(c.calls, ToolCall{})
		c.index = append(c.index, idx)
		c.args = append(c.args, nil)
		i = len(c.calls) - 1
	}
	if tc.ID != "" {
		c.calls[i].ID = tc.ID
	}
	if tc.Function.Name != "" && c.calls[i].Name == "" {
		c.calls[i].Name = tc.Function.Name
	}
	c.args[i] = append(c.args[i], tc.Function.Arguments...)
}

func (c *openAIToolCalls) finish() []ToolCall {
	for i := range c.calls {
		args := strings.TrimSpace(string(c.args[i]))
		if args == "" {
			args = "{}"
		}
		c.calls[i].Arguments = json.RawMessage(args)
	}
	return c.calls
}

func openAIMessages(req Request) []oaMessage {
	out := make([]oaMessage, 0, len(req.Messages)+1)
	text := func(s string) *string { return &s }
	if req.System != "" {
		out = append(out, oaMessage{Role: "system", Content: text(req.System)})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			out = append(out, oaMessage{Role: "user", Content: text(m.Content)})
		case RoleTool:
			out = append(out, oaMessage{Role: "tool", Content: text(m.Content), ToolCallID: m.ToolCallID})
		case RoleAssistant:
			a := oaMessage{Role: "assistant"}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				a.Content = text(m.Content)
			}
			for _, tc := range m.ToolCalls {
				call := oaToolCall{ID: tc.ID, Type: "function"}
				call.Function.Name, call.Function.Arguments = tc.Name, string(argsOrEmpty(tc.Arguments))
				a.ToolCalls = append(a.ToolCalls, call)
			}
			out = append(out, a)
		}
	}
	return out
}

// openAIFunction sends the tool's JSON Schema as given; a missing or
// unreadable one becomes the empty object schema the API requires.
func openAIFunction(t ToolSpec) oaTool {
	f := oaTool{Type: "function"}
	f.Function.Name, f.Function.Description = t.Name, t.Description
	var schema map[string]json.RawMessage
	if len(t.Parameters) > 0 && json.Unmarshal(t.Parameters, &schema) == nil && schema != nil {
		f.Function.Parameters = t.Parameters
	} else {
		f.Function.Parameters = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return f
}

func argsOrEmpty(a json.RawMessage) json.RawMessage {
	if len(strings.TrimSpace(string(a))) == 0 {
		return json.RawMessage("{}")
	}
	return a
}
