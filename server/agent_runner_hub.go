package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/opsagent/opsagent/store"
)

// sessionHub is the live event log of one running turn. Events are numbered
// per session (the SSE id) and kept in memory for the life of the turn;
// every viewer, and the writer that persists them, reads the same slice
// with its own cursor and sleeps on wake, which publish closes and
// replaces. So a slow viewer never slows the run or the others, and nothing
// is dropped: it just reads further behind.
type sessionHub struct {
	mu     sync.Mutex
	first  int64 // seq of events[0]
	events []hubEvent
	wake   chan struct{}
	closed bool
}

// hubEvent is one event as sent: Data is the JSON payload.
type hubEvent struct {
	Seq  int64
	Type string
	Data []byte
	At   time.Time
}

func newSessionHub(firstSeq int64) *sessionHub {
	return &sessionHub{first: firstSeq, wake: make(chan struct{})}
}

// publish appends an event and wakes every reader.
func (h *sessionHub) publish(typ string, payload any, at time.Time) {
	data, err := json.Marshal(payload)
	if err != nil {
		data, _ = json.Marshal(map[string]string{"error": "unencodable event payload"})
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.events = append(h.events, hubEvent{Seq: h.first + int64(len(h.events)), Type: typ, Data: data, At: at})
	close(h.wake)
	h.wake = make(chan struct{})
}

// close ends the log; readers finish what they have not read and stop.
func (h *sessionHub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.wake)
	}
}

// since returns the events after seq, the channel to wait on for more, and
// whether the log is closed (no more will come).
func (h *sessionHub) since(after int64) ([]hubEvent, <-chan struct{}, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := max(after+1-h.first, 0)
	var out []hubEvent
	if i < int64(len(h.events)) {
		out = h.events[i:len(h.events):len(h.events)]
	}
	return out, h.wake, h.closed
}

// persist writes the hub's events to session_events in batches until the
// hub is closed and everything is written. It runs beside the turn so the
// run never waits on the database for an event.
func (s *Server) persistHub(sessionID string, h *sessionHub) {
	cursor := h.first - 1
	for {
		evs, wake, closed := h.since(cursor)
		if len(evs) > 0 {
			batch := make([]store.SessionEvent, len(evs))
			for i, e := range evs {
				batch[i] = store.SessionEvent{Seq: e.Seq, Type: e.Type, Data: string(e.Data), CreatedAt: e.At}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if err := s.db.AppendSessionEvents(ctx, sessionID, batch); err != nil {
				s.log.Error("session events not saved", "session_id", sessionID, "from", evs[0].Seq, "count", len(evs), "err", err)
			}
			cancel()
			cursor = evs[len(evs)-1].Seq
			continue
		}
		if closed {
			return
		}
		select {
		case <-wake:
		case <-time.After(time.Second):
		}
		// A short pause gathers the deltas of a burst into one transaction.
		time.Sleep(20 * time.Millisecond)
	}
}

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

// streamSession writes a session's events after seq `after` to w: first the
// stored ones, then the live turn's as they come, until the turn ends, the
// client goes away or the server shuts down. A session with no live turn
// gets its stored events and the stream ends.
func (s *Server) streamSession(ctx context.Context, w *sseWriter, sessionID string, after int64) error {
	hub := s.runner.hub(sessionID)
	// Stored events: everything before the live turn (or all, when idle).
	for {
		limit := 500
		evs, err := s.db.SessionEventsAfter(ctx, sessionID, after, limit)
		if err != nil {
			return err
		}
		for _, e := range evs {
			if hub != nil && e.Seq >= hub.first {
				break
			}
			if err := w.event(e.Seq, e.Type, []byte(e.Data)); err != nil {
				return err
			}
			after = e.Seq
		}
		w.flush()
		if len(evs) < limit || (hub != nil && after+1 >= hub.first) {
			break
		}
	}
	if hub == nil {
		return nil
	}
	beat := time.NewTicker(sseHeartbeat)
	defer beat.Stop()
	for {
		evs, wake, closed := hub.since(after)
		for _, e := range evs {
			if err := w.event(e.Seq, e.Type, e.Data); err != nil {
				return err
			}
			after = e.Seq
		}
		if len(evs) > 0 {
			w.flush()
			continue
		}
		if closed {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-beat.C:
			if err := w.comment("keep-alive"); err != nil {
				return err
			}
		}
	}
}
