package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
)

type serverRecords struct {
	OverflowErrors []struct {
		Server string
		Status int
		Limit  int
		Prompt int
		Body   json.RawMessage
	} `json:"overflow_errors"`
	Streams []struct {
		Server        string
		What          string
		Chunks        []json.RawMessage
		Usage         bool
		WantReasoning string                                 `json:"want_reasoning"`
		WantCalls     []struct{ ID, Name, Arguments string } `json:"want_calls"`
	}
}

func loadServerRecords(t *testing.T) serverRecords {
	t.Helper()
	raw, err := os.ReadFile("testdata/wire/servers.json")
	if err != nil {
		t.Fatal(err)
	}
	var rec serverRecords
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestRecordedOverflowErrorsAreRecognised replays each server's recorded
// "too long" reply through the real provider: each must come out as a
// context overflow with the limit (and prompt size) the server named.
func TestRecordedOverflowErrorsAreRecognised(t *testing.T) {
	for _, c := range loadServerRecords(t).OverflowErrors {
		t.Run(c.Server, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(c.Status)
				_, _ = w.Write(c.Body)
			}))
			defer srv.Close()
			provider, base := ProviderOpenAI, srv.URL+"/v1"
			if c.Server == "anthropic" {
				provider, base = ProviderAnthropic, srv.URL
			}
			p, err := New(Config{Provider: provider, BaseURL: base, APIKey: "k", Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Stream(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}, nil)
			e, ok := err.(*Error)
			if !ok || e.Class != ClassContextOverflow || e.ContextLimit != c.Limit || e.PromptTokens != c.Prompt {
				t.Fatalf("got %#v, want a context overflow naming limit %d and prompt %d", err, c.Limit, c.Prompt)
			}
			if e.Attempts != 1 {
				t.Errorf("an overflow was retried %d times as it is", e.Attempts)
			}
		})
	}
}

// TestRecordedStreamsAreRead replays recorded streams of Ollama and
// llama.cpp: whole and piecewise tool calls, reasoning_content, usage on
// the finishing chunk or none at all (then estimated).
func TestRecordedStreamsAreRead(t *testing.T) {
	for i, c := range loadServerRecords(t).Streams {
		t.Run(fmt.Sprintf("%s_%d", c.Server, i), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				for _, ch := range c.Chunks {
					fmt.Fprintf(w, "data: %s\n\n", ch)
				}
				fmt.Fprint(w, "data: [DONE]\n\n")
			}))
			defer srv.Close()
			p, err := New(Config{Provider: ProviderOpenAI, BaseURL: srv.URL + "/v1", Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := p.Stream(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "list files"}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.ToolCalls) != len(c.WantCalls) {
				t.Fatalf("calls = %+v, want %+v", resp.ToolCalls, c.WantCalls)
			}
			for j, w := range c.WantCalls {
				got := resp.ToolCalls[j]
				if got.ID != w.ID || got.Name != w.Name || string(got.Arguments) != w.Arguments {
					t.Errorf("call %d = %s %s %s, want %s %s %s", j, got.ID, got.Name, got.Arguments, w.ID, w.Name, w.Arguments)
				}
			}
			if resp.Reasoning != c.WantReasoning || resp.Content != "" {
				t.Errorf("reasoning %q content %q, want reasoning %q and no content", resp.Reasoning, resp.Content, c.WantReasoning)
			}
			if resp.Usage.Estimated == c.Usage || resp.Usage.InputTokens == 0 {
				t.Errorf("usage %+v: the stream carried usage: %v", resp.Usage, c.Usage)
			}
		})
	}
}
