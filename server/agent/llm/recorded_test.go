package llm_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm"
)

// replay is a loopback provider that answers each request with the next
// recorded raw HTTP response from testdata/llm, written in small pieces so
// SSE lines and JSON chunks straddle reads as they do over a real network.
type replay struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	files  []string
	paths  []string
	bodies [][]byte
}

func newReplay(t *testing.T, files ...string) *replay {
	t.Helper()
	r := &replay{t: t, files: files}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *replay) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	n := len(r.paths)
	r.paths = append(r.paths, req.URL.Path)
	r.bodies = append(r.bodies, body)
	r.mu.Unlock()
	if n >= len(r.files) {
		r.t.Errorf("request %d beyond the %d recorded responses", n+1, len(r.files))
		http.Error(w, "no more recordings", http.StatusInternalServerError)
		return
	}
	f, err := os.Open(filepath.Join("..", "..", "..", "testdata", "llm", r.files[n]))
	if err != nil {
		r.t.Fatalf("recording: %v", err)
	}
	defer f.Close()
	rec, err := http.ReadResponse(bufio.NewReader(f), req)
	if err != nil {
		r.t.Fatalf("recording %s: %v", r.files[n], err)
	}
	recorded, _ := io.ReadAll(rec.Body)
	for k, v := range rec.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.StatusCode)
	for len(recorded) > 0 {
		k := min(7, len(recorded))
		_, _ = w.Write(recorded[:k])
		w.(http.Flusher).Flush()
		recorded = recorded[k:]
	}
}

func (r *replay) provider(t *testing.T, provider string, edit ...func(*llm.Config)) llm.Provider {
	t.Helper()
	base := r.srv.URL
	if provider == llm.ProviderOpenAI {
		base += "/v1/" // trailing slash: the client must not double it
	}
	cfg := llm.Config{Provider: provider, BaseURL: base, APIKey: "sk-recorded-secret", Model: "recorded-model",
		Retry: llm.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 50 * time.Millisecond}}
	for _, e := range edit {
		e(&cfg)
	}
	p, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRecordedOpenAIText(t *testing.T) {
	r := newReplay(t, "openai/stream_text.http")
	var deltas []string
	resp, err := r.provider(t, llm.ProviderOpenAI).Stream(context.Background(), userAsks("disk?"),
		func(d llm.Delta) { deltas = append(deltas, d.Text) })
	if err != nil {
		t.Fatal(err)
	}
	want := "/var is 91% full — rotate the journal."
	if resp.Content != want || strings.Join(deltas, "") != want || len(deltas) != 3 {
		t.Errorf("content %q from deltas %q", resp.Content, deltas)
	}
	if resp.StopReason != "stop" || resp.Usage != (llm.Usage{InputTokens: 57, OutputTokens: 12}) {
		t.Errorf("stop %q usage %+v", resp.StopReason, resp.Usage)
	}
	if r.paths[0] != "/v1/chat/completions" {
		t.Errorf("path = %q", r.paths[0])
	}
}

func TestRecordedOpenAIParallelToolCalls(t *testing.T) {
	r := newReplay(t, "openai/stream_tool_calls.http")
	req := userAsks("check")
	req.Tools = []llm.ToolSpec{{Name: "run_command", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)}, {Name: "read_file"}}
	resp, err := r.provider(t, llm.ProviderOpenAI).Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 2 || resp.StopReason != "tool_calls" || resp.Content != "" {
		t.Fatalf("response = %+v", resp)
	}
	c0, c1 := resp.ToolCalls[0], resp.ToolCalls[1]
	if c0.ID != "call_Vx8mQ2rT5yU1" || c0.Name != "run_command" || string(c0.Arguments) != `{"command": "df -h /var", "note": "déjà vu ✓"}` {
		t.Errorf("call 0 = %+v args %s", c0, c0.Arguments)
	}
	if c1.ID != "call_Zk3nB7wP0qL4" || c1.Name != "read_file" || string(c1.Arguments) != `{"path": "/etc/hosts"}` {
		t.Errorf("call 1 = %+v args %s", c1, c1.Arguments)
	}
	if resp.Usage.InputTokens != 312 || resp.Usage.OutputTokens != 41 {
		t.Errorf("usage = %+v", resp.Usage)
	}
	// The request is the documented shape: tools as functions, streaming with usage.
	var sent struct {
		Stream        bool `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(r.bodies[0], &sent); err != nil {
		t.Fatal(err)
	}
	if !sent.Stream || !sent.StreamOptions.IncludeUsage || len(sent.Messages) != 2 || sent.Messages[0].Role != "system" ||
		len(sent.Tools) != 2 || sent.Tools[1].Type != "function" || string(sent.Tools[1].Function.Parameters) != `{"type":"object","properties":{}}` {
		t.Errorf("request body = %s", r.bodies[0])
	}
}

func TestRecordedAnthropicToolUse(t *testing.T) {
	r := newReplay(t, "anthropic/stream_tool_use.http")
	req := userAsks("disk?")
	req.Tools = []llm.ToolSpec{{Name: "run_command", Description: "Run", Parameters: json.RawMessage(`{"properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`)}}
	var shown strings.Builder
	resp, err := r.provider(t, llm.ProviderAnthropic).Stream(context.Background(), req, func(d llm.Delta) { shown.WriteString(d.Text) })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Okay, let's check the disk on /var:" || shown.String() != resp.Content || resp.StopReason != "tool_use" {
		t.Errorf("content %q shown %q stop %q", resp.Content, shown.String(), resp.StopReason)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].ID != "toolu_01T1x1fJ34qAmk2tNTrN7Up6" ||
		string(resp.ToolCalls[0].Arguments) != `{"command": "df -h /var", "timeout_seconds": 30}` {
		t.Errorf("tool calls = %+v", resp.ToolCalls)
	}
	// Input counts cache reads; output is message_delta's cumulative count.
	if resp.Usage != (llm.Usage{InputTokens: 472 + 1024, OutputTokens: 89}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	var sent struct {
		MaxTokens int `json:"max_tokens"`
		Tools     []struct {
			InputSchema map[string]json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(r.bodies[0], &sent)
	if r.paths[0] != "/v1/messages" || sent.MaxTokens != 4096 || len(sent.Tools) != 1 ||
		string(sent.Tools[0].InputSchema["type"]) != `"object"` || string(sent.Tools[0].InputSchema["additionalProperties"]) != "false" {
		t.Errorf("path %q body %s", r.paths[0], r.bodies[0])
	}
}

func TestRecordedErrors(t *testing.T) {
	cases := []struct {
		provider, file string
		class          llm.ErrorClass
		status         int
		retryAfter     time.Duration
		message        string
	}{
		{llm.ProviderOpenAI, "openai/error_429.http", llm.ClassRateLimit, 429, 20 * time.Millisecond, "Rate limit reached for gpt-4o"},
		{llm.ProviderOpenAI, "openai/error_401.http", llm.ClassAuth, 401, 0, "Incorrect API key provided"},
		{llm.ProviderOpenAI, "openai/stream_error.http", llm.ClassServer, 0, 0, "The server had an error"},
		{llm.ProviderAnthropic, "anthropic/error_429.http", llm.ClassRateLimit, 429, time.Second, "would exceed the rate limit"},
		{llm.ProviderAnthropic, "anthropic/error_529.http", llm.ClassServer, 529, 0, "Overloaded"},
		{llm.ProviderAnthropic, "anthropic/stream_overloaded.http", llm.ClassServer, 0, 0, "Overloaded"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			r := newReplay(t, tc.file)
			p := r.provider(t, tc.provider, func(c *llm.Config) { c.Retry.MaxAttempts = 1 })
			_, err := p.Stream(context.Background(), userAsks("hi"), nil)
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v", err)
			}
			if e.Class != tc.class || e.Status != tc.status || e.RetryAfter != tc.retryAfter || !strings.Contains(e.Message, tc.message) {
				t.Errorf("got %q %d retry-after %v %q", e.Class, e.Status, e.RetryAfter, e.Message)
			}
			if strings.Contains(e.Error(), "sk-recorded-secret") {
				t.Errorf("error leaks the key: %v", e)
			}
		})
	}
}

// A recorded 429 and a mid-stream overload are retried and the next
// recording answers; the wait honours the recorded Retry-After.
func TestRecordedRetriesThenSucceeds(t *testing.T) {
	r := newReplay(t, "openai/error_429.http", "openai/stream_error.http", "openai/stream_text.http")
	start := time.Now()
	resp, err := r.provider(t, llm.ProviderOpenAI).Stream(context.Background(), userAsks("hi"), nil)
	if err != nil || !strings.HasPrefix(resp.Content, "/var is") || len(r.paths) != 3 {
		t.Fatalf("resp %+v err %v after %d requests", resp, err, len(r.paths))
	}
	if time.Since(start) < 20*time.Millisecond {
		t.Errorf("retried before retry-after-ms")
	}
	r = newReplay(t, "anthropic/stream_overloaded.http", "anthropic/error_529.http", "anthropic/stream_tool_use.http")
	resp, err = r.provider(t, llm.ProviderAnthropic).Stream(context.Background(), userAsks("hi"), nil)
	if err != nil || len(resp.ToolCalls) != 1 || len(r.paths) != 3 {
		t.Fatalf("resp %+v err %v after %d requests", resp, err, len(r.paths))
	}
}
