package llm

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// defaultAnthropicMaxTokens fills Request.MaxTokens = 0: the Messages API
// requires a value, and 4096 leaves room for a long tool plan.
const defaultAnthropicMaxTokens = 4096

// anthropicMessages speaks the Anthropic Messages API.
type anthropicMessages struct {
	svc anthropic.MessageService
}

func newAnthropic(cfg Config) *anthropicMessages {
	opts := []option.RequestOption{
		// Only explicit options: the SDK would otherwise read ANTHROPIC_* variables.
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	return &anthropicMessages{svc: anthropic.NewClient(opts...).Messages}
}

func (p *anthropicMessages) attempt(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(req.Model),
		MaxTokens: int64(req.MaxTokens),
		Messages:  anthropicHistory(req.Messages),
	}
	if params.MaxTokens <= 0 {
		params.MaxTokens = defaultAnthropicMaxTokens
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	for _, t := range req.Tools {
		params.Tools = append(params.Tools, anthropicTool(t))
	}
	stream := p.svc.NewStreaming(ctx, params)
	defer stream.Close()

	var msg anthropic.Message
	// The SDK replaces tool input that is not JSON (a call cut off by
	// max_tokens) with {}; keep the text the model sent, so the agent can
	// tell it its arguments were broken rather than missing.
	partial := map[int][]byte{}
	started, stopped := false, false
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "message_start":
			started = true
		case "message_stop":
			stopped = true
		case "content_block_delta":
			switch ev.Delta.Type {
			case "text_delta":
				if ev.Delta.Text != "" {
					onDelta(Delta{Text: ev.Delta.Text})
				}
			case "input_json_delta":
				partial[int(ev.Index)] = append(partial[int(ev.Index)], ev.Delta.PartialJSON...)
			}
		}
		if !started {
			continue
		}
		if err := msg.Accumulate(ev); err != nil {
			return Response{}, &Error{Class: ClassBadResponse, Provider: ProviderAnthropic, Message: err.Error(), Err: err}
		}
	}
	if err := stream.Err(); err != nil {
		return Response{}, err
	}
	if !started {
		return Response{}, &Error{Class: ClassBadResponse, Provider: ProviderAnthropic,
			Message: "the response held no message_start event"}
	}
	if !stopped {
		return Response{}, &Error{Class: ClassNetwork, Provider: ProviderAnthropic,
			Message: "the stream ended before message_stop"}
	}
	var resp Response
	var text strings.Builder
	for i, block := range msg.Content {
		switch block.Type {
		case "text":
			text.WriteString(block.Text)
		case "tool_use":
			args := block.Input
			if p, ok := partial[i]; ok {
				args = p
			}
			resp.ToolCalls = append(resp.ToolCalls, ToolCall{
				ID: block.ID, Name: block.Name, Arguments: argsOrEmpty(args),
			})
		}
	}
	resp.Content = text.String()
	resp.StopReason = string(msg.StopReason)
	u := msg.Usage
	resp.Usage = Usage{
		InputTokens:  int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens),
		OutputTokens: int(u.OutputTokens),
	}
	return resp, nil
}

// anthropicHistory maps the conversation onto Anthropic's two roles: tool
// results are user content blocks, and consecutive same-role messages merge
// so the user/assistant alternation the API expects holds.
func anthropicHistory(msgs []Message) []anthropic.MessageParam {
	out := make([]anthropic.MessageParam, 0, len(msgs))
	for _, m := range msgs {
		var role anthropic.MessageParamRole
		var blocks []anthropic.ContentBlockParamUnion
		switch m.Role {
		case RoleUser:
			role = anthropic.MessageParamRoleUser
			blocks = append(blocks, anthropic.NewTextBlock(m.Content))
		case RoleTool:
			role = anthropic.MessageParamRoleUser
			blocks = append(blocks, anthropic.NewToolResultBlock(m.ToolCallID, m.Content, m.IsError))
		case RoleAssistant:
			role = anthropic.MessageParamRoleAssistant
			if m.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, objectOrEmpty(tc.Arguments), tc.Name))
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
		out = append(out, anthropic.MessageParam{Role: role, Content: blocks})
	}
	return out
}

// anthropicTool splits a JSON Schema into the SDK's properties/required
// fields, keeping every other keyword as-is.
func anthropicTool(t ToolSpec) anthropic.ToolUnionParam {
	schema := anthropic.ToolInputSchemaParam{Properties: map[string]any{}}
	var raw map[string]json.RawMessage
	if len(t.Parameters) > 0 && json.Unmarshal(t.Parameters, &raw) == nil {
		for k, v := range raw {
			switch k {
			case "type":
			case "properties":
				var props map[string]any
				if json.Unmarshal(v, &props) == nil {
					schema.Properties = props
				}
			case "required":
				_ = json.Unmarshal(v, &schema.Required)
			default:
				if schema.ExtraFields == nil {
					schema.ExtraFields = map[string]any{}
				}
				schema.ExtraFields[k] = v
			}
		}
	}
	tool := anthropic.ToolUnionParamOfTool(schema, t.Name)
	if t.Description != "" {
		tool.OfTool.Description = anthropic.String(t.Description)
	}
	return tool
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
