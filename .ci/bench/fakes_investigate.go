package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The systems outside the product that the evidence rows need, served by
// this process on loopback: an OpenAI-compatible model that answers at once
// and notes when each run's first request arrived, and Prometheus, Loki,
// Alertmanager and Grafana answering at once in their wire formats (or
// never, for the hanging source).

// fakeLLM answers every chat completion with a short text (the run then
// ends) and wakes whoever waits for a request holding a marker.
type fakeLLM struct {
	url     string
	mu      sync.Mutex
	waiters map[string]chan time.Time
	bodies  map[string]string // the first request's body per marker, for checks
}

func newFakeLLM() (*fakeLLM, error) {
	f := &fakeLLM{waiters: map[string]chan time.Time{}, bodies: map[string]string{}}
	url, err := serveLoopback(http.HandlerFunc(f.handle))
	f.url = url
	return f, err
}

// expect registers a marker; the channel receives the arrival time of the
// first model request whose body holds it.
func (f *fakeLLM) expect(marker string) <-chan time.Time {
	ch := make(chan time.Time, 1)
	f.mu.Lock()
	f.waiters[marker] = ch
	f.mu.Unlock()
	return ch
}

func (f *fakeLLM) body(marker string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[marker]
}

func (f *fakeLLM) handle(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	b, _ := io.ReadAll(r.Body)
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"bench","object":"model"}]}`))
		return
	}
	s := string(b)
	f.mu.Lock()
	for m, ch := range f.waiters {
		if strings.Contains(s, m) {
			ch <- at
			f.bodies[m] = s
			delete(f.waiters, m)
		}
	}
	f.mu.Unlock()
	var req struct {
		Stream bool `json:"stream"`
	}
	_ = json.Unmarshal(b, &req)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"c","object":"chat.completion","created":1,"model":"bench","choices":[{"index":0,"message":{"role":"assistant","content":"Looked at the evidence; nothing more to do."},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range []string{
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"bench","choices":[{"index":0,"delta":{"role":"assistant","content":"Looked at the evidence; nothing more to do."},"finish_reason":null}]}`,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"bench","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"bench","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`,
	} {
		fmt.Fprintf(w, "data: %s\n\n", c)
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}

// sourceFakes are the four integrations, answering at once with a little
// data each; hang makes one of them never answer.
func sourceFakes(hang string) (map[string]string, error) {
	now := func() int64 { return time.Now().Unix() }
	answers := map[string]http.HandlerFunc{
		"prometheus": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"http_request_duration_p99","service":"api"},"values":[[%d,"0.21"],[%d,"2.73"]]}]}}`, now()-60, now())
		},
		"loki": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"status":"success","data":{"resultType":"streams","result":[{"stream":{"service":"api"},"values":[["%d","ERROR pool exhausted: 5 of 5 connections busy"]]}]}}`, time.Now().UnixNano())
		},
		"alertmanager": func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/silences") {
				_, _ = w.Write([]byte(`[{"id":"s1","comment":"maintenance of db-2","createdBy":"ops","endsAt":"2099-01-01T00:00:00Z","status":{"state":"active"},"matchers":[{"name":"instance","value":"db-2"}]}]`))
				return
			}
			_, _ = w.Write([]byte(`[{"labels":{"alertname":"HighErrorRate","service":"api"},"startsAt":"2024-05-01T10:00:00Z","status":{"state":"active"}}]`))
		},
		"grafana": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `[{"time":%d,"text":"deploy api v2.0","tags":["deploy"],"dashboardUID":"d1"}]`, time.Now().UnixMilli())
		},
	}
	out := map[string]string{}
	for kind, h := range answers {
		if kind == hang {
			h = func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
		}
		hh := h
		u, err := serveLoopback(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			hh(w, r)
		}))
		if err != nil {
			return nil, err
		}
		out[kind] = u
	}
	return out, nil
}

// serveLoopback serves h on a free loopback port for the rest of the run.
func serveLoopback(h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	go func() { _ = http.Serve(ln, h) }()
	return "http://" + ln.Addr().String(), nil
}
