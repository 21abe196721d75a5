package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	sse "github.com/tmaxmax/go-sse"

	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// fakePrices makes the fake model cost something: $1000 / $2000 per
// million tokens in / out, so 1000 tokens in cost exactly $1.
const fakePrices = `{"fake-model":{"input_per_mtok":1000,"output_per_mtok":2000}}`

// withLLM points the server at a scripted fake LLM over loopback.
func withLLM(fake *llmfake.Server) func(*server.Config) {
	return func(c *server.Config) {
		c.LLMProvider = llm.ProviderOpenAI
		c.LLMBaseURL = fake.BaseURL(llm.ProviderOpenAI)
		c.LLMAPIKey = llmfake.APIKey
		c.LLMModel = llmfake.Model
		c.LLMPrices = fakePrices
	}
}

// sseEvent is one received server-sent event.
type sseEvent struct {
	ID   int64
	Type string
	Data map[string]any
}

// stream sends a request and reads its event stream with go-sse until the
// server ends it (or stop says so). lastID > 0 is sent as Last-Event-ID.
func (c *client) stream(method, path string, body any, lastID int64, stop func(sseEvent) bool) (*http.Response, []sseEvent) {
	t := c.env.t
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, c.env.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.Token)
	if c.Project != "" {
		req.Header.Set("X-Project-ID", c.Project)
	}
	if lastID > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(lastID, 10))
	}
	for k, vs := range c.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	res, err := c.hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return res, nil
	}
	var out []sseEvent
	for ev, err := range sse.Read(res.Body, nil) {
		if err != nil {
			t.Fatalf("reading the stream of %s: %v", path, err)
		}
		id, _ := strconv.ParseInt(ev.LastEventID, 10, 64)
		e := sseEvent{ID: id, Type: ev.Type}
		if err := json.Unmarshal([]byte(ev.Data), &e.Data); err != nil {
			t.Fatalf("event %s data is not JSON: %q", ev.Type, ev.Data)
		}
		out = append(out, e)
		if stop != nil && stop(e) {
			break
		}
	}
	return res, out
}

func types(evs []sseEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

func lastOf(t *testing.T, evs []sseEvent, typ string) sseEvent {
	t.Helper()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == typ {
			return evs[i]
		}
	}
	t.Fatalf("no %s event in %v", typ, types(evs))
	return sseEvent{}
}

// wantBudgetStop asserts a turn a budget stopped: its done event failed with
// a reason naming the cap (capText), and its error event is budget_exceeded.
func wantBudgetStop(t *testing.T, evs []sseEvent, capText string) {
	t.Helper()
	done := lastOf(t, evs, "done")
	reason, _ := done.Data["reason"].(string)
	if done.Data["status"] != "failed" || !strings.Contains(reason, capText) {
		t.Fatalf("done (want failed, reason with %q): %v", capText, done.Data)
	}
	if e := lastOf(t, evs, "error"); e.Data["code"] != "budget_exceeded" {
		t.Fatalf("error event: %v", e.Data)
	}
}
