package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

var providers = []string{llm.ProviderOpenAI, llm.ProviderAnthropic}

func newProvider(t *testing.T, fake *llmfake.Server, provider string, edit ...func(*llm.Config)) llm.Provider {
	t.Helper()
	cfg := fake.Config(provider)
	for _, e := range edit {
		e(&cfg)
	}
	p, err := llm.New(cfg)
	if err != nil {
		t.Fatalf("llm.New: %v", err)
	}
	return p
}

func userAsks(s string) llm.Request {
	return llm.Request{System: "You are terse.", Messages: []llm.Message{{Role: llm.RoleUser, Content: s}}}
}

func TestStreamsTextDeltasInOrder(t *testing.T) {
	for _, provider := range providers {
		t.Run(provider, func(t *testing.T) {
			fake := llmfake.New(t, llmfake.Text("The disk is 40% full on /var.").WithUsage(120, 9))
			p := newProvider(t, fake, provider)
			var deltas []string
			resp, err := p.Stream(context.Background(), userAsks("disk?"), func(d llm.Delta) { deltas = append(deltas, d.Text) })
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if len(deltas) < 3 {
				t.Errorf("got %d deltas, want several", len(deltas))
			}
			if got := strings.Join(deltas, ""); got != "The disk is 40% full on /var." {
				t.Errorf("joined deltas = %q", got)
			}
			if resp.Content != "The disk is 40% full on /var." || len(resp.ToolCalls) != 0 {
				t.Errorf("response = %+v", resp)
			}
			if resp.Usage != (llm.Usage{InputTokens: 120, OutputTokens: 9}) {
				t.Errorf("usage = %+v, want 120/9", resp.Usage)
			}
			req := fake.Requests()[0]
			if !req.Stream || req.Model != llmfake.Model || req.System != "You are terse." {
				t.Errorf("recorded request = stream %v model %q system %q", req.Stream, req.Model, req.System)
			}
			if provider == llm.ProviderOpenAI {
				if got := req.Header.Get("Authorization"); got != "Bearer "+llmfake.APIKey {
					t.Errorf("Authorization = %q", got)
				}
				var body struct {
					StreamOptions struct {
						IncludeUsage bool `json:"include_usage"`
					} `json:"stream_options"`
				}
				_ = json.Unmarshal(req.Body, &body)
				if !body.StreamOptions.IncludeUsage {
					t.Errorf("stream_options.include_usage not sent: %s", req.Body)
				}
			} else if got := req.Header.Get("X-Api-Key"); got != llmfake.APIKey {
				t.Errorf("x-api-key = %q", got)
			}
		})
	}
}

func TestAssemblesSplitToolCallsAndSendsResultsBack(t *testing.T) {
	for _, provider := range providers {
		t.Run(provider, func(t *testing.T) {
			args1 := `{"command":"df -h /var/lib/docker","timeout_seconds":30,"note":"ünïcödé ✓"}`
			args2 := `{"path":"/etc/hosts"}`
			fake := llmfake.New(t,
				llmfake.Reply("Checking.", llmfake.Call{Name: "run_command", Arguments: args1},
					llmfake.Call{Name: "read_file", Arguments: args2}),
				llmfake.Text("Done."),
			)
			p := newProvider(t, fake, provider)
			req := userAsks("check disk")
			req.Tools = []llm.ToolSpec{
				{Name: "run_command", Description: "Run a shell command", Parameters: json.RawMessage(
					`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`)},
				{Name: "read_file", Description: "Read a file"},
			}
			resp, err := p.Stream(context.Background(), req, nil)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if len(resp.ToolCalls) != 2 {
				t.Fatalf("got %d tool calls, want 2: %+v", len(resp.ToolCalls), resp)
			}
			c := resp.ToolCalls[0]
			if c.Name != "run_command" || c.ID == "" || string(c.Arguments) != args1 {
				t.Errorf("call 0 = %+v (args %s)", c, c.Arguments)
			}
			if c := resp.ToolCalls[1]; c.Name != "read_file" || string(c.Arguments) != args2 {
				t.Errorf("call 1 = %+v", c)
			}
			if got := fake.Requests()[0].Tools; strings.Join(got, ",") != "run_command,read_file" {
				t.Errorf("tools offered = %v", got)
			}

			req.Messages = append(req.Messages,
				llm.Message{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls},
				llm.Message{Role: llm.RoleTool, ToolCallID: resp.ToolCalls[0].ID, Content: "/dev/sda1 40%"},
				llm.Message{Role: llm.RoleTool, ToolCallID: resp.ToolCalls[1].ID, Content: "no such file", IsError: true},
			)
			if _, err := p.Stream(context.Background(), req, nil); err != nil {
				t.Fatalf("second Stream: %v", err)
			}
			sent := fake.Requests()[1]
			results := sent.ToolResults()
			if len(results) != 2 || results[0].ToolCallID != resp.ToolCalls[0].ID || results[0].Content != "/dev/sda1 40%" {
				t.Fatalf("tool results sent = %+v", results)
			}
			if provider == llm.ProviderAnthropic && !results[1].IsError {
				t.Errorf("is_error not sent for the failed tool")
			}
			var echoed []llmfake.Call
			for _, m := range sent.Messages {
				echoed = append(echoed, m.ToolCalls...)
			}
			if len(echoed) != 2 || echoed[0].ID != resp.ToolCalls[0].ID {
				t.Errorf("assistant tool calls echoed = %+v", echoed)
			}
		})
	}
}

func TestRetriesRateLimitThenSucceeds(t *testing.T) {
	for _, provider := range providers {
		t.Run(provider, func(t *testing.T) {
			fake := llmfake.New(t, llmfake.RateLimited(20*time.Millisecond), llmfake.Error(503), llmfake.Text("ok"))
			p := newProvider(t, fake, provider)
			start := time.Now()
			resp, err := p.Stream(context.Background(), userAsks("hi"), nil)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if resp.Content != "ok" || len(fake.Requests()) != 3 {
				t.Errorf("content %q after %d requests, want ok after 3", resp.Content, len(fake.Requests()))
			}
			if waited := time.Since(start); waited < 20*time.Millisecond {
				t.Errorf("retried after %v, before the 20ms Retry-After", waited)
			}
		})
	}
}

func TestFailuresAreClassified(t *testing.T) {
	cases := []struct {
		name     string
		turns    []llmfake.Turn
		class    llm.ErrorClass
		status   int
		requests int
	}{
		{"server error forever", []llmfake.Turn{llmfake.Always(llmfake.Error(500))}, llm.ClassServer, 500, 3},
		{"unauthorized", []llmfake.Turn{llmfake.Error(401)}, llm.ClassAuth, 401, 1},
		{"bad request", []llmfake.Turn{llmfake.Error(400)}, llm.ClassBadRequest, 400, 1},
		{"garbage", []llmfake.Turn{llmfake.Garbage()}, llm.ClassBadResponse, 0, 1},
	}
	for _, provider := range providers {
		for _, tc := range cases {
			t.Run(provider+"/"+tc.name, func(t *testing.T) {
				fake := llmfake.New(t, tc.turns...)
				p := newProvider(t, fake, provider)
				_, err := p.Stream(context.Background(), userAsks("hi"), nil)
				var e *llm.Error
				if !errors.As(err, &e) {
					t.Fatalf("err = %v, want *llm.Error", err)
				}
				if e.Class != tc.class || e.Status != tc.status || e.Provider != provider {
					t.Errorf("got class %q status %d provider %q, want %q %d %q (%v)", e.Class, e.Status, e.Provider, tc.class, tc.status, provider, e)
				}
				if got := len(fake.Requests()); got != tc.requests {
					t.Errorf("got %d requests, want %d", got, tc.requests)
				}
				if strings.Contains(e.Error(), llmfake.APIKey) {
					t.Errorf("error leaks the API key: %v", e)
				}
			})
		}
	}
}

func TestTimeoutAndCancel(t *testing.T) {
	for _, provider := range providers {
		t.Run(provider+"/timeout", func(t *testing.T) {
			fake := llmfake.New(t, llmfake.Always(llmfake.Hang()))
			p := newProvider(t, fake, provider, func(c *llm.Config) {
				c.Timeout = 50 * time.Millisecond
				c.Retry.MaxAttempts = 2
			})
			_, err := p.Stream(context.Background(), userAsks("hi"), nil)
			if llm.ClassOf(err) != llm.ClassTimeout || len(fake.Requests()) != 2 {
				t.Errorf("got %v after %d requests, want timeout after 2", err, len(fake.Requests()))
			}
		})
		t.Run(provider+"/cancel", func(t *testing.T) {
			fake := llmfake.New(t, llmfake.Hang())
			p := newProvider(t, fake, provider)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(30*time.Millisecond, cancel)
			_, err := p.Stream(ctx, userAsks("hi"), nil)
			if llm.ClassOf(err) != llm.ClassCanceled || !errors.Is(err, context.Canceled) {
				t.Errorf("got %v, want canceled wrapping context.Canceled", err)
			}
		})
	}
}

func TestNewNamesTheVariablesWhenUnconfigured(t *testing.T) {
	for _, cfg := range []llm.Config{
		{},
		{Provider: "anthropic", Model: "claude-sonnet-4-5"},
		{Provider: "openai", APIKey: "k"},
	} {
		_, err := llm.New(cfg)
		if llm.ClassOf(err) != llm.ClassConfig {
			t.Fatalf("New(%+v) = %v, want a config error", cfg, err)
		}
		for _, v := range []string{"OPSAGENT_LLM_PROVIDER", "OPSAGENT_LLM_BASE_URL", "OPSAGENT_LLM_API_KEY", "OPSAGENT_LLM_MODEL"} {
			if !strings.Contains(err.Error(), v) {
				t.Errorf("New(%+v) error %q does not name %s", cfg, err, v)
			}
		}
	}
	if _, err := llm.New(llm.Config{Provider: "mistral", Model: "m", APIKey: "k"}); llm.ClassOf(err) != llm.ClassConfig {
		t.Errorf("unknown provider accepted: %v", err)
	}
	// A local OpenAI-compatible server needs no key.
	if _, err := llm.New(llm.Config{Provider: "openai", BaseURL: "http://127.0.0.1:11434/v1", Model: "llama3.1"}); err != nil {
		t.Errorf("local server without key rejected: %v", err)
	}
	env := map[string]string{"OPSAGENT_LLM_PROVIDER": " Anthropic ", "OPSAGENT_LLM_MODEL": "claude-haiku-4-5", "OPSAGENT_LLM_API_KEY": "k"}
	cfg := llm.ConfigFromEnv(func(k string) string { return env[k] })
	if cfg.Provider != "anthropic" || cfg.Model != "claude-haiku-4-5" || cfg.Validate() != nil {
		t.Errorf("ConfigFromEnv = %+v (%v)", cfg, cfg.Validate())
	}
}

func TestCost(t *testing.T) {
	prices := llm.DefaultPrices()
	u := llm.Usage{InputTokens: 1_000_000, OutputTokens: 100_000}
	cases := map[string]float64{
		"gpt-4o-mini":                0.15 + 0.06,
		"gpt-4o-mini-2024-07-18":     0.15 + 0.06, // dated name, priced as gpt-4o-mini, not gpt-4o
		"claude-sonnet-4-5-20250929": 3 + 1.5,
		"llama3.1:8b":                0,
	}
	for model, want := range cases {
		if got := prices.Cost(model, u); math.Abs(got-want) > 1e-9 {
			t.Errorf("Cost(%q) = %v, want %v", model, got, want)
		}
	}
	prices["llama3.1:8b"] = llm.Price{InputPerMTok: 1, OutputPerMTok: 1}
	if got := prices.Cost("llama3.1:8b", u); math.Abs(got-1.1) > 1e-9 {
		t.Errorf("overridden price: got %v, want 1.1", got)
	}
}

func TestCutStreamIsNotRetriedOnceTextWasShown(t *testing.T) {
	for _, provider := range providers {
		t.Run(provider, func(t *testing.T) {
			fake := llmfake.New(t, llmfake.Cut("Half of an answer that"), llmfake.Text("must not be asked for"))
			p := newProvider(t, fake, provider)
			var shown strings.Builder
			_, err := p.Stream(context.Background(), userAsks("hi"), func(d llm.Delta) { shown.WriteString(d.Text) })
			if llm.ClassOf(err) != llm.ClassNetwork {
				t.Errorf("err = %v, want a network error", err)
			}
			if shown.String() != "Half of an answer that" || len(fake.Requests()) != 1 {
				t.Errorf("shown %q after %d requests, want the half answer once", shown.String(), len(fake.Requests()))
			}
		})
	}
}

func TestIgnoresTheProvidersOwnEnvironmentVariables(t *testing.T) {
	for _, v := range []string{"OPENAI_API_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"} {
		t.Setenv(v, "ambient-secret")
	}
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	for _, provider := range providers {
		t.Run(provider, func(t *testing.T) {
			fake := llmfake.New(t, llmfake.Text("ok"))
			p := newProvider(t, fake, provider)
			if _, err := p.Stream(context.Background(), userAsks("hi"), nil); err != nil {
				t.Fatalf("Stream: %v", err)
			}
			for name, values := range fake.Requests()[0].Header {
				for _, v := range values {
					if strings.Contains(v, "ambient-secret") {
						t.Errorf("header %s carries the ambient key", name)
					}
				}
			}
		})
	}
}
