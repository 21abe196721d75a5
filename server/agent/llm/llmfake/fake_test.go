package llmfake_test

import (
	"context"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// The non-streaming answers are read by the SDKs' own non-streaming calls,
// which is what would break if the JSON shapes drifted from the real APIs.
func TestNonStreamingAnswersParseWithTheSDKs(t *testing.T) {
	fake := llmfake.New(t,
		llmfake.Reply("Looking.", llmfake.Call{Name: "run_command", Arguments: `{"command":"uptime"}`}).WithUsage(11, 7),
	)
	fake.Add(llmfake.Reply("Looking.", llmfake.Call{Name: "run_command", Arguments: `{"command":"uptime"}`}).WithUsage(11, 7))

	oa := openai.NewClient(option.WithBaseURL(fake.BaseURL(llm.ProviderOpenAI)), option.WithAPIKey("k"), option.WithMaxRetries(0))
	c, err := oa.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "fake-model", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	if err != nil {
		t.Fatalf("openai: %v", err)
	}
	msg := c.Choices[0].Message
	if msg.Content != "Looking." || len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Arguments != `{"command":"uptime"}` ||
		c.Usage.PromptTokens != 11 || c.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("openai completion = %+v", c)
	}

	an := anthropic.NewClient(anthropicoption.WithBaseURL(fake.BaseURL(llm.ProviderAnthropic)),
		anthropicoption.WithAPIKey("k"), anthropicoption.WithMaxRetries(0))
	m, err := an.Messages.New(context.Background(), anthropic.MessageNewParams{
		Model: "fake-model", MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	})
	if err != nil {
		t.Fatalf("anthropic: %v", err)
	}
	if len(m.Content) != 2 || m.Content[0].Text != "Looking." || m.Content[1].Name != "run_command" ||
		string(m.Content[1].Input) != `{"command":"uptime"}` || m.StopReason != "tool_use" || m.Usage.OutputTokens != 7 {
		t.Errorf("anthropic message = %+v", m)
	}

	reqs := fake.Requests()
	if len(reqs) != 2 || reqs[0].Stream || reqs[1].MaxTokens != 100 || reqs[1].Messages[0].Content != "hi" {
		t.Errorf("recorded = %+v", reqs)
	}
	if fake.Remaining() != 0 {
		t.Errorf("%d turns left", fake.Remaining())
	}
}
