package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// sseWriter writes server-sent events and flushes each one.
type sseWriter struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) (*sseWriter, error) {
	f, ok := w.(http.Flusher)
	if !ok {
		return nil, fmt.Errorf("streaming is not supported by this connection")
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	f.Flush()
	return &sseWriter{w: w, f: f}, nil
}

func (s *sseWriter) event(seq int64, typ string, data []byte) error {
	_, err := fmt.Fprintf(s.w, "id: %d\nevent: %s\ndata: %s\n\n", seq, typ, data)
	return err
}

func (s *sseWriter) comment(text string) error {
	_, err := fmt.Fprintf(s.w, ": %s\n\n", text)
	s.f.Flush()
	return err
}

func (s *sseWriter) flush() { s.f.Flush() }

// sseHeartbeat keeps idle streams alive through proxies.
const sseHeartbeat = 15 * time.Second

// streamSession writes a session's events after seq `after` to w as SSE
// records (id: the event's number, event: its name, data: its JSON): the
// stored ones, then the live turn's as they come, until the turn ends, the
// client goes away or the server shuts down.
func (s *Server) streamSession(ctx context.Context, w *sseWriter, sessionID string, after int64) error {
	sub := s.runner.Subscribe(sessionID, after)
	var beat *time.Ticker
	defer func() {
		if beat != nil {
			beat.Stop()
		}
	}()
	for {
		evs, more, err := sub.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range evs {
			if err := w.event(e.Seq, e.Type, e.Data); err != nil {
				return err
			}
		}
		if len(evs) > 0 {
			w.flush()
			continue
		}
		if beat == nil {
			beat = time.NewTicker(sseHeartbeat)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-more:
		case <-beat.C:
			if err := w.comment("keep-alive"); err != nil {
				return err
			}
		}
	}
}
