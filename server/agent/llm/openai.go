package llm

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"
)

// openAIChat speaks OpenAI chat completions, the dialect Ollama, llama.cpp
// and vLLM also serve.
type openAIChat struct {
	svc openai.ChatCompletionService
}

func newOpenAI(cfg Config) *openAIChat {
	base := cfg.BaseURL
	if base == "" {
		base = "https://api.openai.com/v1/"
	}
	// The service is built from explicit options only: openai.NewClient would
	// also read OPENAI_* variables, and this server has its own.
	return &openAIChat{svc: openai.NewChatCompletionService(
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithBaseURL(base),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0),
	)}
}

func (p *openAIChat) attempt(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	params := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(req.Model),
		Messages:      openAIMessages(req),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.MaxTokens > 0 {
		params.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
	}
	for _, t := range req.Tools {
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(openAIFunction(t)))
	}
	stream := p.svc.NewStreaming(ctx, params)
	defer stream.Close()

	var (
		content strings.Builder
		calls   openAIToolCalls
		resp    Response
		chunks  int
	)
	for stream.Next() {
		chunk := stream.Current()
		chunks++
		if chunk.JSON.Usage.Valid() {
			resp.Usage = Usage{InputTokens: int(chunk.Usage.PromptTokens), OutputTokens: int(chunk.Usage.CompletionTokens)}
		}
		for _, choice := range chunk.Choices {
			if choice.Index != 0 {
				continue // we never ask for n > 1
			}
			if choice.Delta.Content != "" {
				content.WriteString(choice.Delta.Content)
				onDelta(Delta{Text: choice.Delta.Content})
			}
			for _, tc := range choice.Delta.ToolCalls {
				calls.add(tc)
			}
			if choice.FinishReason != "" {
				resp.StopReason = choice.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
		return Response{}, err
	}
	if chunks == 0 {
		return Response{}, &Error{Class: ClassBadResponse, Provider: ProviderOpenAI,
			Message: "the response held no chat completion chunks"}
	}
	if resp.StopReason == "" {
		return Response{}, &Error{Class: ClassNetwork, Provider: ProviderOpenAI,
			Message: "the stream ended before the completion finished"}
	}
	resp.Content = content.String()
	resp.ToolCalls = calls.finish()
	return resp, nil
}

// openAIToolCalls assembles tool calls whose id, name and argument text
// arrive spread over chunks, keyed by the index the server gives them.
type openAIToolCalls struct {
	calls []ToolCall
	index []int64
	args  [][]byte
}

func (c *openAIToolCalls) add(tc openai.ChatCompletionChunkChoiceDeltaToolCall) {
	i := -1
	for j := len(c.index) - 1; j >= 0; j-- {
		if c.index[j] == tc.Index {
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
		c.index = append(c.index, tc.Index)
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

func openAIMessages(req Request) []openai.ChatCompletionMessageParamUnion {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1)
	if req.System != "" {
		out = append(out, openai.SystemMessage(req.System))
	}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			out = append(out, openai.UserMessage(m.Content))
		case RoleTool:
			out = append(out, openai.ToolMessage(m.Content, m.ToolCallID))
		case RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				a.Content.OfString = param.NewOpt(m.Content)
			}
			for _, tc := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID: tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
							Name: tc.Name, Arguments: string(argsOrEmpty(tc.Arguments)),
						},
					},
				})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		}
	}
	return out
}

func openAIFunction(t ToolSpec) shared.FunctionDefinitionParam {
	f := shared.FunctionDefinitionParam{Name: t.Name}
	if t.Description != "" {
		f.Description = openai.String(t.Description)
	}
	var schema map[string]any
	if len(t.Parameters) > 0 && json.Unmarshal(t.Parameters, &schema) == nil {
		f.Parameters = schema
	} else {
		f.Parameters = shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
	}
	return f
}

func argsOrEmpty(a json.RawMessage) json.RawMessage {
	if len(strings.TrimSpace(string(a))) == 0 {
		return json.RawMessage("{}")
	}
	return a
}
