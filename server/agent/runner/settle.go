package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/store"
)

// How a turn ends, so that a viewer who sees its last event can act on it at
// once: the next message sent the moment done arrives, on this server or any
// other, finds the session settled (its status saved, every event stored,
// the run no longer live nor held), never 409 session_running, and numbers
// its events after done.
//
// Viewers read only stored events (hub.visible), so an event id a viewer
// saw is never given again to another event, even after kill -9: a run
// resumed after a crash numbers its events after the last stored one.

// isSealed reports whether persist must stop once it caught up.
func (h *hub) isSealed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sealed
}

// seal tells persist to stop after what was published so far.
func (h *hub) seal() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sealed = true
	close(h.wake)
	h.wake = make(chan struct{})
}

// nextSeq is the number the next published event gets.
func (h *hub) nextSeq() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.first + int64(len(h.events))
}

// visible returns the stored events after seq (what a viewer may see), the
// channel closed when more are stored, and whether no more will come.
func (h *hub) visible(after int64) ([]Event, <-chan struct{}, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := max(after+1-h.first, 0)
	end := min(h.stored+1-h.first, int64(len(h.events)))
	var out []Event
	if i < end {
		out = h.events[i:end:end]
	}
	return out, h.storedWake, h.closed && end >= int64(len(h.events))
}

// publishStored appends events already stored by their writer (numbered
// from nextSeq) and shows them to viewers.
func (h *hub) publishStored(evs []Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	for _, e := range evs {
		e.Seq = h.first + int64(len(h.events))
		h.events = append(h.events, e)
	}
	h.stored = h.first + int64(len(h.events)) - 1
	close(h.wake)
	h.wake = make(chan struct{})
	close(h.storedWake)
	h.storedWake = make(chan struct{})
}

// close ends the log; readers finish what they have not read and stop.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.wake)
		close(h.storedWake)
		h.storedWake = make(chan struct{})
	}
}

// settleTurn ends a live turn: persist stops once every event published is
// stored, final stores the turn's last events (numbered from the seq it is
// given, with the turn's outcome when it writes that too) and returns them,
// the run is released, and only then do viewers get those events.
func (r *Runner) settleTurn(sessionID string, lr *liveRun, final func(next int64) []Event) {
	lr.hub.seal()
	<-lr.persisted
	var evs []Event
	if final != nil {
		evs = final(lr.hub.nextSeq())
	}
	r.unregister(sessionID, lr)
	lr.hub.publishStored(evs)
	lr.hub.close()
	close(lr.finished)
}

// finalEvents are a turn's last events, numbered from next: approval.required
// (with the approval's id) when it stopped for one, then done.
func (r *Runner) finalEvents(next int64, res turnResult, status, approvalID string, sess *store.AgentSession) []Event {
	now := r.d.Now()
	var out []Event
	add := func(typ string, payload any) {
		data, err := json.Marshal(payload)
		if err != nil {
			data = []byte(fmt.Sprintf(`{"error":%q}`, "unencodable event payload"))
		}
		out = append(out, Event{Seq: next + int64(len(out)), Type: typ, Data: data, At: now})
	}
	if p := res.pending; p != nil {
		add(string(agent.EventApprovalRequired), ApprovalRequired{ApprovalRequired: agent.ApprovalRequired{
			Step: p.Step, CallID: p.Call.ID, Name: p.Call.Name, Arguments: p.Call.Arguments, Reason: p.Reason}, ApprovalID: approvalID})
	}
	d := Done{Status: status, WaitingApproval: res.pending != nil, AgentStatus: string(res.status), Reason: res.reason,
		Steps: res.steps, Usage: res.usage, Cost: res.cost}
	if sess != nil {
		d.SessionTokensIn, d.SessionTokensOut, d.SessionCost = sess.TokensIn, sess.TokensOut, sess.Cost
	}
	add(string(agent.EventDone), d)
	return out
}

// storeEvents converts events for AppendSessionEvents and TurnEnd.Final.
func storeEvents(evs []Event) []store.SessionEvent {
	out := make([]store.SessionEvent, len(evs))
	for i, e := range evs {
		out[i] = store.SessionEvent{Seq: e.Seq, Type: e.Type, Data: string(e.Data), CreatedAt: e.At}
	}
	return out
}

// storeFinal writes final events on their own (a task run, whose outcome
// the scheduler saved); the error is logged, and viewers get them anyway.
func (r *Runner) storeFinal(sessionID string, evs []Event) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.d.DB.AppendSessionEvents(ctx, sessionID, storeEvents(evs)); err != nil {
		r.log.Error("agent: last events not saved", "session_id", sessionID, "err", err)
	}
}

// settleElsewhere waits (bounded) while another server of a cluster holds
// the session's run but has already saved its outcome: it is writing the
// last events, and the next turn must number its own after them. A turn
// still running elsewhere is not waited for (BeginTurn answers 409).
func (r *Runner) settleElsewhere(ctx context.Context, info RunInfo) error {
	if !r.d.DB.Shared() || r.liveRun(info.SessionID) != nil {
		return nil
	}
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); {
		sess, err := r.d.DB.FindAgentSession(ctx, info.OrgID, info.SessionID)
		if err != nil || (sess.Status == store.SessionRunning || sess.Status == store.SessionPending) {
			return nil // BeginTurn answers for it
		}
		held, err := r.d.DB.RunHeldElsewhere(ctx, info.SessionID)
		if err != nil || !held {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// Draining reports whether the server is shutting down (new turns refused).
func (r *Runner) Draining() bool { return r.draining.Load() }
