package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// defaultAnthropicMaxTokens fills Request.MaxTokens = 0: the Messages API
// requires a value, and 4096 leaves room for a long tool plan.
const defaultAnthropicMaxTokens = 4096

// anthropicVersion is the API version header the Messages API requires.
const anthropicVersion = "2023-06-01"

// anthropicMessages speaks the Anthropic Messages API (POST {base}/v1/messages
// with "stream": true).
type anthropicMessages struct {
	hc     *http.Client
	url    string
	apiKey string
}

func newAnthropic(cfg Config) *anthropicMessages {
	base := cfg.BaseURL
	if base == "" {
		base = "https://api.anthropic.com"
	}
	// Only what Config says: no ANTHROPIC_* variable is read.
	return &anthropicMessages{hc: cfg.HTTPClient, url: joinURL(base, "v1/messages"), apiKey: cfg.APIKey}
}

type anRequest struct {
	Model     string      `json:"model"`
	MaxTokens int         `json:"max_tokens"`
	System    []anBlock   `json:"system,omitempty"`
	Messages  []anMessage `json:"messages"`
	Tools     []anTool    `json:"tools,omitempty"`
	Stream    bool        `json:"stream"`
}

type anMessage struct {
	Role    string    `json:"role"`
	Content []anBlock `json:"content"`
}

// anBlock is a content block; Type decides which other fields are sent.
type anBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
}

type anTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// anEvent holds the fields of every streamed event type we read.
type anEvent struct {
	Type    string `json:"type"`
	Message *struct {
		Usage anUsage `json:"usage"`
	} `json:"message"` // message_start
	Index        int `json:"index"`
	ContentBlock *struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content_block"` // content_block_start
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"` // content_block_delta, message_delta
	Usage *anUsage `json:"usage"` // message_delta
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"` // error
}

// anBlockState is one content block being assembled from its events.
type anBlockState struct {
	typ, id, name string
	text          strings.Builder
	signature     string
	input         json.RawMessage // from content_block_start
	partial       []byte          // input_json_delta pieces
	sawPartial    bool
}

func (p *anthropicMessages) attempt(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	body := anRequest{Model: req.Model, MaxTokens: req.MaxTokens, Messages: anthropicHistory(req.Messages), Stream: true}
	if body.MaxTokens <= 0 {
		body.MaxTokens = defaultAnthropicMaxTokens
	}
	if req.System != "" {
		body.System = []anBlock{{Type: "text", Text: &req.System}}
	}
	for _, t := range req.Tools {
		body.Tools = append(body.Tools, anthropicTool(t))
	}
	h := http.Header{}
	h.Set("X-Api-Key", p.apiKey)
	h.Set("Anthropic-Version", anthropicVersion)
	resp, err := post(ctx, p.hc, ProviderAnthropic, p.url, h, body)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()

	var (
		blocks           = map[int]*anBlockState{}
		order            []int
		usage            anUsage
		out              Response
		started, stopped bool
		filter           deltaFilter // a proxied open model may still write <think>
		events           = newSSEReader(resp.Body)
	)
	for !stopped {
		ev, err := events.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Response{}, err
		}
		var e anEvent
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			return Response{}, badResponse(ProviderAnthropic, "a stream event is not JSON", err)
		}
		switch e.Type {
		case "error":
			if e.Error != nil {
				return Response{}, anthropicStreamError(e.Error.Type, e.Error.Message)
			}
			return Response{}, anthropicStreamError("", string(ev.Data))
		case "message_start":
			started = true
			if e.Message != nil {
				usage = e.Message.Usage
			}
		case "content_block_start":
			if e.ContentBlock == nil {
				continue
			}
			b := &anBlockState{typ: e.ContentBlock.Type, id: e.ContentBlock.ID, name: e.ContentBlock.Name, input: e.ContentBlock.Input}
			b.text.WriteString(e.ContentBlock.Text)
			if _, seen := blocks[e.Index]; !seen {
				order = append(order, e.Index)
			}
			blocks[e.Index] = b
		case "content_block_delta":
			b := blocks[e.Index]
			if b == nil || e.Delta == nil {
				continue
			}
			switch e.Delta.Type {
			case "text_delta":
				if e.Delta.Text != "" {
					b.text.WriteString(e.Delta.Text)
					if shown := filter.feed(e.Delta.Text); shown != "" {
						onDelta(Delta{Text: shown})
					}
				}
			case "thinking_delta":
				b.text.WriteString(e.Delta.Thinking) // reasoning: kept, never streamed as the answer
			case "signature_delta":
				b.signature += e.Delta.Signature
			case "input_json_delta":
				b.partial = append(b.partial, e.Delta.PartialJSON...)
				b.sawPartial = true
			}
		case "message_delta":
			if e.Delta != nil && e.Delta.StopReason != "" {
				out.StopReason = e.Delta.StopReason
			}
			if u := e.Usage; u != nil {
				// output_tokens is cumulative; input counts appear here only
				// when they changed (server tools), so zeros keep the start's.
				usage.OutputTokens = u.OutputTokens
				usage.InputTokens = cmpOr(u.InputTokens, usage.InputTokens)
				usage.CacheCreationInputTokens = cmpOr(u.CacheCreationInputTokens, usage.CacheCreationInputTokens)
				usage.CacheReadInputTokens = cmpOr(u.CacheReadInputTokens, usage.CacheReadInputTokens)
			}
		case "message_stop":
			stopped = true
		}
	}
	if !started {
		return Response{}, badResponse(ProviderAnthropic, "the response held no message_start event", nil)
	}
	if !stopped {
		return Response{}, &Error{Class: ClassNetwork, Provider: ProviderAnthropic,
			Message: "the stream ended before message_stop"}
	}
	var text strings.Builder
	for _, i := range order {
		b := blocks[i]
		switch b.typ {
		case "text":
			text.WriteString(b.text.String())
		case "thinking":
			out.Reasoning += b.text.String()
			out.ReasoningSignature += b.signature
		case "redacted_thinking":
			// encrypted reasoning: nothing to show, nothing this server can resend faithfully
		case "tool_use":
			// The text the model sent is kept even when it is not JSON (a
			// call cut off by max_tokens), so the agent can tell it its
			// arguments were broken rather than missing.
			args := b.input
			if b.sawPartial {
				args = b.partial
			}
			out.ToolCalls = append(out.ToolCalls, ToolCall{ID: b.id, Name: b.name, Arguments: argsOrEmpty(args)})
		}
	}
	answer, thought := splitThink(text.String())
	out.Content = answer
	if thought != "" && out.ReasoningSignature == "" { // a signed block must go back exactly as it came
		out.Reasoning = strings.TrimSpace(out.Reasoning + "\n\n" + thought)
	}
	out.Usage = Usage{
		InputTokens:  usage.InputTokens + usage.CacheCreationInputTokens + usage.CacheReadInputTokens,
		OutputTokens: usage.OutputTokens,
	}
	return out, nil
}

func cmpOr(v, fallback int) int {
	if v != 0 {
		return v
	}
	return fallback
}

// anthropicStreamError classifies an "error" event sent after the 200:
// overloaded_error and api_error are the server's trouble and retried.
func anthropicStreamError(typ, msg string) *Error {
	class := ClassServer
	switch typ {
	case "rate_limit_error":
		class = ClassRateLimit
	case "invalid_request_error", "request_too_large", "not_found_error":
		class = ClassBadRequest
	case "authentication_error", "permission_error":
		class = ClassAuth
	}
	if msg == "" {
		msg = typ
	}
	return &Error{Class: class, Provider: ProviderAnthropic, Message: clip(msg, maxMessage)}
}

// anthropicHistory maps the conversation onto Anthropic's two roles: tool
// results are user content blocks, and consecutive same-role messages merge
// so the user/assistant alternation the API expects holds.
func anthropicHistory(msgs []Message) []anMessage {
	out := make([]anMessage, 0, len(msgs))
	for _, m := range msgs {
		var role string
		var blocks []anBlock
		content := m.Content
		switch m.Role {
		case RoleUser:
			role = "user"
			blocks = append(blocks, anBlock{Type: "text", Text: &content})
		case RoleTool:
			role = "user"
			blocks = append(blocks, anBlock{Type: "tool_result", ToolUseID: m.ToolCallID, Content: &content, IsError: m.IsError})
		case RoleAssistant:
			role = "assistant"
			// A signed thinking block must precede the tool_use blocks it
			// led to, or the API refuses the continuation; unsigned
			// reasoning (another provider's) is never sent.
			if m.ReasoningSignature != "" && len(m.ToolCalls) > 0 {
				thinking := m.Reasoning
				blocks = append(blocks, anBlock{Type: "thinking", Thinking: &thinking, Signature: m.ReasoningSignature})
			}
			if m.Content != "" {
				blocks = append(blocks, anBlock{Type: "text", Text: &content})
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, anBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: objectOrEmpty(tc.Arguments)})
			}
		default:
			continue
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			continue
		}
		out = append(out, anMessage{Role: role, Content: blocks})
	}
	return out
}

// anthropicTool sends the tool's JSON Schema as input_schema, forcing the
// "type":"object" the API requires and keeping every other keyword as-is.
func anthropicTool(t ToolSpec) anTool {
	schema := map[string]json.RawMessage{}
	if len(t.Parameters) > 0 {
		_ = json.Unmarshal(t.Parameters, &schema)
		if schema == nil {
			schema = map[string]json.RawMessage{}
		}
	}
	schema["type"] = json.RawMessage(`"object"`)
	if _, ok := schema["properties"]; !ok {
		schema["properties"] = json.RawMessage(`{}`)
	}
	raw, _ := json.Marshal(schema)
	return anTool{Name: t.Name, Description: t.Description, InputSchema: raw}
}

// objectOrEmpty keeps tool_use input a JSON object: the model may have
// produced broken arguments, and the API rejects a history that replays them.
func objectOrEmpty(a json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(a, &obj) != nil || obj == nil {
		return json.RawMessage("{}")
	}
	return a
}
