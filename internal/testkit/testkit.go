// Package testkit is what tests across the module share to drive a running
// opsagent from outside: a buffer its goroutines or a child process may write
// while the test reads, a JSON call over real HTTP, and the built binary
// started as a process. It imports nothing of opsagent, so any package's
// tests may use it (internal/testsrv adds the in-process server).
package testkit

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"sync"
	"testing"
)

// SyncBuffer is a bytes.Buffer that writers on other goroutines (a server's
// logger, a child process) may fill while the test reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Listening finds the address in the server's "opsagent listening" log line
// (text format).
var Listening = regexp.MustCompile(`msg="opsagent listening" addr=(\S+)`)

// Request builds a JSON request (body marshalled unless nil) with an
// optional bearer token and X-Project-ID.
func Request(tb testing.TB, method, url, token, project string, body any) *http.Request {
	tb.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			tb.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if project != "" {
		req.Header.Set("X-Project-ID", project)
	}
	return req
}

// Do sends Request's request and returns the status and the raw answer.
func Do(tb testing.TB, method, url, token, project string, body any) (int, []byte) {
	tb.Helper()
	res, err := http.DefaultClient.Do(Request(tb, method, url, token, project, body))
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return res.StatusCode, out
}

// Call is Do that fails the test unless the status is want (any 2xx when
// want is 0) and decodes a JSON object answer (nil for anything else).
func Call(tb testing.TB, method, url, token, project string, body any, want int) map[string]any {
	tb.Helper()
	status, out := Do(tb, method, url, token, project, body)
	if (want == 0 && (status < 200 || status >= 300)) || (want != 0 && status != want) {
		tb.Fatalf("%s %s: got %d, want %d: %s", method, url, status, want, out)
	}
	var m map[string]any
	_ = json.Unmarshal(out, &m)
	return m
}

// Bytes returns a copy of what was written so far.
func (s *SyncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}
