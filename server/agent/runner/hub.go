package runner

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/opsagent/opsagent/store"
)

// hub is the live event log of one running turn. Events are numbered per
// session and kept in memory for the life of the turn; every viewer, and
// the writer that persists them, reads the same slice with its own cursor
// and sleeps on wake, which publish closes and replaces. So a slow viewer
// never slows the run or the others, and nothing is dropped: it just reads
// further behind.
type hub struct {
	mu     sync.Mutex
	first  int64 // seq of events[0]
	events []Event
	wake   chan struct{}
	closed bool
	// sealed: persist stops once it has written what was published so far;
	// the turn writes its last events itself, with its outcome (settle.go).
	sealed bool
	// cp is a checkpoint for persist to write with the events before it.
	cp *cpRequest
	// stored is the last seq persist has written (or given up on);
	// storedWake is closed and replaced when it moves.
	stored     int64
	storedWake chan struct{}
}

func newHub(firstSeq int64) *hub {
	return &hub{first: firstSeq, wake: make(chan struct{}), stored: firstSeq - 1, storedWake: make(chan struct{})}
}

// markStored records that persist wrote the events through seq.
func (h *hub) markStored(seq int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stored = seq
	close(h.storedWake)
	h.storedWake = make(chan struct{})
}

// waitStored waits (at most d) until every event published so far is in
// session_events: a task run's final status is saved only after that, so
// whoever reads a finished run's events reads all of them (done aside,
// which is published once the status is saved).
func (h *hub) waitStored(d time.Duration) {
	deadline := time.After(d)
	for {
		h.mu.Lock()
		last, stored, wake := h.first+int64(len(h.events))-1, h.stored, h.storedWake
		h.mu.Unlock()
		if stored >= last {
			return
		}
		select {
		case <-wake:
		case <-deadline:
			return
		}
	}
}

// publish appends an event and wakes every reader.
func (h *hub) publish(typ string, payload any, at time.Time) {
	data, err := json.Marshal(payload)
	if err != nil {
		data, _ = json.Marshal(map[string]string{"error": "unencodable event payload"})
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.events = append(h.events, Event{Seq: h.first + int64(len(h.events)), Type: typ, Data: data, At: at})
	close(h.wake)
	h.wake = make(chan struct{})
}

// since returns the events after seq, the channel to wait on for more, and
// whether the log is closed (no more will come).
func (h *hub) since(after int64) ([]Event, <-chan struct{}, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := max(after+1-h.first, 0)
	var out []Event
	if i < int64(len(h.events)) {
		out = h.events[i:len(h.events):len(h.events)]
	}
	return out, h.wake, h.closed
}

// persist writes the hub's events to session_events in batches until the
// hub is closed and everything is written. It runs beside the turn so the
// run never waits on the database for an event.
func (r *Runner) persist(sessionID string, h *hub) {
	cursor := h.first - 1
	for {
		cp := h.takeCheckpoint() // before since: it covers every event published before it
		evs, wake, closed := h.since(cursor)
		if len(evs) > 0 || cp != nil {
			if err := r.persistBatch(sessionID, storeEvents(evs), cp); err != nil {
				r.log.Error("session events not saved", "session_id", sessionID, "count", len(evs), "checkpoint", cp != nil, "err", err)
			}
			if len(evs) > 0 {
				cursor = evs[len(evs)-1].Seq
				h.markStored(cursor)
			}
			continue
		}
		if closed || h.isSealed() {
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

// Subscription follows one session's events: first the stored ones, then
// the live turn's as they come, until the turn ends. A session with no live
// turn when Subscribe was called gets its stored events and ends.
type Subscription struct {
	db        *store.DB
	sessionID string
	after     int64
	hub       *hub // the live turn at Subscribe, if any
	live      bool // the stored events are read: follow the hub
}

// storedPage is how many stored events one Next reads at most.
const storedPage = 500

// Subscribe follows sessionID's events after seq `after`.
func (r *Runner) Subscribe(sessionID string, after int64) *Subscription {
	return &Subscription{db: r.d.DB, sessionID: sessionID, after: after, hub: r.hub(sessionID)}
}

// Next returns the next events. With none ready it returns a channel that
// is closed when more may be; io.EOF when the stream is over.
func (s *Subscription) Next(ctx context.Context) ([]Event, <-chan struct{}, error) {
	for !s.live {
		evs, err := s.db.SessionEventsAfter(ctx, s.sessionID, s.after, storedPage)
		if err != nil {
			return nil, nil, err
		}
		var out []Event
		for _, e := range evs {
			if s.hub != nil && e.Seq >= s.hub.first {
				break // the live turn's: read from the hub
			}
			out = append(out, Event{Seq: e.Seq, Type: e.Type, Data: []byte(e.Data), At: e.CreatedAt})
			s.after = e.Seq
		}
		if len(evs) < storedPage || (s.hub != nil && s.after+1 >= s.hub.first) {
			s.live = true
		}
		if len(out) > 0 {
			return out, nil, nil
		}
	}
	if s.hub == nil && s.db.Shared() {
		return s.nextRemote(ctx)
	}
	if s.hub == nil {
		return nil, nil, io.EOF
	}
	evs, wake, closed := s.hub.visible(s.after)
	if len(evs) > 0 {
		s.after = evs[len(evs)-1].Seq
		return evs, nil, nil
	}
	if closed {
		return nil, nil, io.EOF
	}
	return nil, wake, nil
}
