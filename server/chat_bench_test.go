package server_test

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsagent/opsagent/internal/testkit"
	"github.com/opsagent/opsagent/internal/testsrv"
	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// BenchmarkSSEFanOut100 measures one session's turn streamed to 100 viewers
// over loopback HTTP: each iteration is a chat turn of ~200 deltas and every
// viewer reading all of its events to done. Reported per delivered event.
func BenchmarkSSEFanOut100(b *testing.B) {
	const viewers = 100
	words := strings.Repeat("disk usage is fine ", 50) // 200 deltas
	fake := llmfake.New(b, llmfake.Always(llmfake.Text(words).After(50*time.Millisecond)))
	base, token, project := chatBenchServer(b, withLLM(fake))
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: viewers + 10}}
	call := func(method, path string, body any) map[string]any {
		return benchCall(b, hc, method, base+path, token, project, body)
	}
	sid := call("POST", "/api/chat", map[string]any{"message": "warm up"})["x-session-id"].(string)
	waitIdle := func() {
		for call("GET", "/api/sessions/detail/"+sid, nil)["status"] == "running" {
			time.Sleep(time.Millisecond)
		}
	}
	waitIdle()
	var delivered int64
	b.ResetTimer()
	for b.Loop() {
		r := call("POST", "/api/sessions/"+sid+"/resume", map[string]any{"prompt": "again"})
		first := int64(r["first_event_id"].(float64))
		var wg sync.WaitGroup
		var mu sync.Mutex
		for range viewers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n := watch(b, hc, base+"/api/sessions/"+sid+"/events", token, project, first-1)
				mu.Lock()
				delivered += n
				mu.Unlock()
			}()
		}
		wg.Wait()
		waitIdle()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(delivered), "ns/event-delivered")
	b.ReportMetric(float64(delivered)/float64(b.N*viewers), "events/viewer")
}

// watch reads a session's events (raw lines, to time the server, not a
// client library) until done; it returns the number of events.
func watch(b *testing.B, hc *http.Client, url, token, project string, after int64) int64 {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("X-Project-ID", project)
	req.Header.Set("Last-Event-ID", strconv.FormatInt(after, 10))
	res, err := hc.Do(req)
	if err != nil {
		b.Error(err)
		return 0
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var n int64
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "event: ") {
			n++
			if line == "event: done" {
				return n
			}
		}
	}
	return n
}

// benchServer starts a real server over a temp data dir for a benchmark and
// returns its URL, an owner's token and a project id.
func chatBenchServer(b *testing.B, opts ...func(*server.Config)) (string, string, string) {
	opts = append([]func(*server.Config){func(c *server.Config) {
		c.MailFrom, c.LogLevel, c.AgentTurnsPerMinute = "b <b@test>", "", 1<<20 // a benchmark is not abuse
	}}, opts...)
	base := testsrv.Start(b, "", testsrv.Options{Logger: slog.New(slog.DiscardHandler), Config: opts}).URL
	hc := &http.Client{}
	tok := benchCall(b, hc, "POST", base+"/api/auth/register", "", "", map[string]any{"email": "bench@example.com", "password": "correct horse battery"})["access_token"].(string)
	pid := benchCall(b, hc, "POST", base+"/api/projects", tok, "", map[string]any{"name": "bench"})["id"].(string)
	return base, tok, pid
}

// benchCall sends a JSON request and decodes the answer (the X-Session-ID
// header, when present, as "x-session-id"); a status of 400 or more fails.
func benchCall(b *testing.B, hc *http.Client, method, url, token, project string, body any) map[string]any {
	res, err := hc.Do(testkit.Request(b, method, url, token, project, body))
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 400 {
		b.Fatalf("%s %s: %d %s", method, url, res.StatusCode, raw)
	}
	out := map[string]any{}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(raw, &out)
	}
	if sid := res.Header.Get("X-Session-ID"); sid != "" {
		out["x-session-id"] = sid
	}
	return out
}
