package llmfake

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm"
)

// Model and APIKey are what Config puts in an llm.Config; the fake accepts any.
const (
	Model  = "fake-model"
	APIKey = "llmfake-test-key"
)

// maxBody bounds a recorded request; the agent's histories stay far below.
const maxBody = 8 << 20

// Server is a running fake. It is closed by the test's Cleanup.
type Server struct {
	URL string // root, e.g. http://127.0.0.1:41234

	t      testing.TB
	srv    *httptest.Server
	mu     sync.Mutex
	script []Turn
	next   int
	reqs   []Request
	ids    int
	// dialect and ctxLimit make the fake behave like one server (dialect.go).
	dialect  Dialect
	ctxLimit int
	respond  func(Request) (Turn, bool)
}

// Respond installs f, asked before the script for every request: when it
// returns true its turn answers and the script does not advance (for
// requests a test cannot place in order, such as a summarizer's).
func (s *Server) Respond(f func(Request) (Turn, bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.respond = f
}

// New starts a fake answering with turns in order.
func New(t testing.TB, turns ...Turn) *Server {
	t.Helper()
	s := &Server{t: t, script: turns}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.handle(openAIWire{s: s}))
	mux.HandleFunc("POST /v1/messages", s.handle(anthropicWire{}))
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// BaseURL is the base URL a provider's SDK needs: with "/v1" for OpenAI,
// without for Anthropic (its SDK adds the version itself).
func (s *Server) BaseURL(provider string) string {
	if provider == llm.ProviderAnthropic {
		return s.URL
	}
	return s.URL + "/v1"
}

// Config is an llm.Config pointing at the fake, with fast retries so tests
// of 429 and 5xx take milliseconds.
func (s *Server) Config(provider string) llm.Config {
	return llm.Config{
		Provider: provider,
		BaseURL:  s.BaseURL(provider),
		APIKey:   APIKey,
		Model:    Model,
		Timeout:  10 * time.Second,
		Retry:    llm.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 50 * time.Millisecond},
	}
}

// Add appends turns to the script, for tests that script as they go.
func (s *Server) Add(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, turns...)
}

// Requests returns a copy of every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Remaining is how many scripted turns have not been consumed (an Always
// turn counts once).
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script) - s.next
}

// wire writes one provider's format.
type wire interface {
	parse(header http.Header, body []byte) (Request, error)
	writeError(w http.ResponseWriter, status int, message string)
	writeJSON(w http.ResponseWriter, model string, t Turn, calls []Call, u Usage)
	writeStream(w http.ResponseWriter, model string, t Turn, calls []Call, u Usage)
}

func (s *Server) handle(wf wire) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
		if err != nil {
			wf.writeError(w, http.StatusBadRequest, "unreadable body")
			return
		}
		rec, perr := wf.parse(r.Header, body)
		rec.Path, rec.Header, rec.Body = r.URL.Path, r.Header.Clone(), body
		rec.Tokens = countTokens(rec)
		if s.overflows(w, &rec) {
			return
		}
		turn, ok := s.take(rec)
		if perr != nil {
			s.t.Errorf("llmfake: request to %s is not valid for the wire format: %v", r.URL.Path, perr)
			wf.writeError(w, http.StatusBadRequest, perr.Error())
			return
		}
		if !ok {
			s.t.Errorf("llmfake: request #%d to %s beyond the end of the script", len(s.Requests()), r.URL.Path)
			wf.writeError(w, http.StatusInternalServerError, "llmfake: script exhausted")
			return
		}
		if !wait(r.Context(), turn) {
			return
		}
		calls := s.withIDs(turn.Calls, r.URL.Path)
		switch {
		case turn.Status != 0:
			if turn.RetryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int((turn.RetryAfter+time.Second-1)/time.Second)))
				w.Header().Set("Retry-After-Ms", strconv.FormatInt(turn.RetryAfter.Milliseconds(), 10))
			}
			wf.writeError(w, turn.Status, fmt.Sprintf("llmfake scripted %d", turn.Status))
		case turn.Garbage:
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "<html><body>502 Bad Gateway</body></html>\ndata: {this is not json\n\n")
		case rec.Stream && turn.Cut:
			w.Header().Set("Content-Type", "text/event-stream")
			wf.writeStream(cutWriter{w}, rec.Model, Turn{Text: turn.Text}, nil, turn.usage(len(body)))
		case rec.Stream:
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Cache-Control", "no-cache")
			wf.writeStream(w, rec.Model, turn, calls, s.usage(turn, rec))
		default:
			w.Header().Set("Content-Type", "application/json")
			wf.writeJSON(w, rec.Model, turn, calls, turn.usage(len(body)))
		}
	}
}

// take records the request and picks its turn.
func (s *Server) take(rec Request) (Turn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, rec)
	if s.respond != nil {
		if t, ok := s.respond(rec); ok {
			return t, true
		}
	}
	if s.next < len(s.script) {
		t := s.script[s.next]
		if !t.repeat || s.next < len(s.script)-1 {
			s.next++
		}
		return t, true
	}
	if n := len(s.script); n > 0 && s.script[n-1].repeat {
		return s.script[n-1], true
	}
	return Turn{}, false
}

// wait applies Delay and Hang; false means the client went away.
func wait(ctx context.Context, t Turn) bool {
	if t.Hang {
		<-ctx.Done()
		return false
	}
	if t.Delay <= 0 {
		return true
	}
	timer := time.NewTimer(t.Delay)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

func (s *Server) withIDs(calls []Call, path string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Call, len(calls))
	for i, c := range calls {
		if c.ID == "" {
			s.ids++
			prefix := "call_"
			if path == "/v1/messages" {
				prefix = "toolu_"
			}
			c.ID = fmt.Sprintf("%s%04d", prefix, s.ids)
		}
		out[i] = c
	}
	return out
}

// cutWriter passes a stream through until its text is out, then aborts
// the connection (net/http resets it on http.ErrAbortHandler).
type cutWriter struct{ http.ResponseWriter }

func (c cutWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(`"finish_reason":"stop"`)) || bytes.Contains(p, []byte("content_block_stop")) {
		flush(c.ResponseWriter)
		panic(http.ErrAbortHandler)
	}
	return c.ResponseWriter.Write(p)
}

func (c cutWriter) Flush() { flush(c.ResponseWriter) }

// flush pushes what was written so the client sees each event separately.
func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// sse writes one server-sent event; event may be empty (OpenAI sends none).
func sse(w io.Writer, event string, data []byte) {
	var b bytes.Buffer
	if event != "" {
		b.WriteString("event: " + event + "\n")
	}
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString("\n\n")
	_, _ = w.Write(b.Bytes())
}
