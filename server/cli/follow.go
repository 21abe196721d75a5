package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"
)

// follower reads one turn of a session to its done event, resuming with
// Last-Event-ID whenever the connection drops (a proxy timeout, a server
// restart): nothing is shown twice and nothing is skipped.
type follower struct {
	a    *app
	c    *client
	sid  string
	last int64 // id of the last event shown
	r    *renderer
	ui   *terminal
}

// reconnectFor is how long the follower keeps trying to get back to the server.
const reconnectFor = 2 * time.Minute

var errStreamEnded = errors.New("the stream ended before the turn did")

// openError is a stream that could not be opened (as opposed to one cut short).
type openError struct{ err error }

func (e *openError) Error() string { return e.err.Error() }
func (e *openError) Unwrap() error { return e.err }

// follow shows the turn whose first stream open returns (nil: the session's
// event stream after f.last) and returns its outcome.
func (f *follower) follow(ctx context.Context, open func(context.Context) (*http.Response, error)) (*doneData, error) {
	if open == nil {
		open = f.openEvents
	}
	var lostAt time.Time
	backoff := 250 * time.Millisecond
	for first := true; ; first = false {
		before := f.last
		done, err := f.stream(ctx, open)
		if f.last > before {
			lostAt, backoff = time.Time{}, 250*time.Millisecond // it got through: a later drop starts afresh
		}
		if done != nil || ctx.Err() != nil {
			return done, ctx.Err()
		}
		var oe *openError
		if first && errors.As(err, &oe) {
			// The request that starts the turn never got an answer: nothing
			// was started, so there is nothing to resume.
			return nil, oe.err
		}
		var apiErr *APIError
		if errors.As(err, &apiErr) && apiErr.Status < 500 {
			return nil, err
		}
		var ce *Error
		if errors.As(err, &ce) {
			return nil, err
		}
		if f.sid == "" {
			return nil, err // the chat request itself failed: no session to resume
		}
		// The stream ended early. A turn that is over (the server stopped
		// under it, say) has nothing more to send: report its final state.
		if done, derr := f.settled(ctx); derr == nil && done != nil {
			return done, nil
		}
		if lostAt.IsZero() {
			lostAt = time.Now()
			f.a.out.note("%s", f.a.out.errPaint(dim, "connection lost ("+errText(err)+"); reconnecting…"))
		}
		if time.Since(lostAt) > reconnectFor {
			return nil, fmt.Errorf("lost the connection to %s for %s; follow the session later with `opsagent sessions show %s --follow`", f.c.base, reconnectFor, f.sid)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-f.ui.interrupts():
			return nil, &Error{Code: ExitError, Err: fmt.Errorf("interrupted while reconnecting; the turn may still be running: `opsagent sessions show %s --follow`", f.sid)}
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 3*time.Second)
		open = f.openEvents
	}
}

func errText(err error) string {
	if err == nil {
		return "closed"
	}
	return err.Error()
}

// openEvents is GET /api/sessions/{id}/events with Last-Event-ID.
func (f *follower) openEvents(ctx context.Context) (*http.Response, error) {
	h := http.Header{}
	h.Set("Last-Event-ID", strconv.FormatInt(f.last, 10))
	return f.c.send(ctx, "GET", "/api/sessions/"+f.sid+"/events", nil, nil, h)
}

// stream reads one connection. It returns the done payload when the turn
// ended on it, or the reason it stopped early.
func (f *follower) stream(ctx context.Context, open func(context.Context) (*http.Response, error)) (*doneData, error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	res, err := open(sctx)
	if err != nil {
		return nil, &openError{err}
	}
	defer res.Body.Close()
	if sid := res.Header.Get("X-Session-ID"); sid != "" {
		f.sid = sid
	}
	events := make(chan event, 64)
	readErr := make(chan error, 1)
	go func() {
		readErr <- readEvents(res.Body, func(ev event) bool {
			select {
			case events <- ev:
				return true
			case <-sctx.Done():
				return false
			}
		})
		close(events)
	}()
	// On a terminal, a spinner fills the silences while the agent thinks or
	// a tool runs; it is cleared before anything else is written.
	stopSpin := func() {}
	defer func() { stopSpin() }()
	for {
		if !f.r.midLine {
			stopSpin = f.a.out.spinner("working…")
		}
		select {
		case ev, ok := <-events:
			stopSpin()
			if !ok {
				if err := <-readErr; err != nil {
					return nil, err
				}
				return nil, errStreamEnded
			}
			if ev.ID != 0 && ev.ID <= f.last {
				continue // already shown (a server replaying more than asked)
			}
			if ev.ID != 0 {
				f.last = ev.ID
			}
			f.r.show(ev)
			if ev.Type == "done" {
				var d doneData
				_ = json.Unmarshal(ev.Data, &d)
				return &d, nil
			}
		case sig := <-f.ui.interrupts():
			stopSpin()
			if err := f.interrupted(ctx, sig); err != nil {
				return nil, err
			}
		}
	}
}

// settled asks whether the session's turn is over; when it is, the outcome
// stands in for the done event the stream never delivered.
func (f *follower) settled(ctx context.Context) (*doneData, error) {
	var s struct {
		Status          string `json:"status"`
		WaitingApproval bool   `json:"waiting_approval"`
		Reason          string `json:"reason"`
	}
	if err := f.c.call(ctx, "GET", "/api/sessions/detail/"+f.sid, nil, nil, &s, nil); err != nil {
		return nil, err
	}
	if (s.Status == "running" || s.Status == "pending") && !s.WaitingApproval {
		return nil, nil
	}
	// Events the live stream missed may be stored by now: show them first.
	if res, err := f.openEvents(ctx); err == nil {
		var done *doneData
		_ = readEvents(res.Body, func(ev event) bool {
			if ev.ID > f.last {
				f.last = ev.ID
				f.r.show(ev)
				if ev.Type == "done" {
					done = &doneData{}
					_ = json.Unmarshal(ev.Data, done)
				}
			}
			return true
		})
		res.Body.Close()
		if done != nil {
			return done, nil
		}
	}
	d := &doneData{Status: s.Status, WaitingApproval: s.WaitingApproval, Reason: s.Reason, AgentStatus: s.Status}
	return d, nil
}

// interrupted handles Ctrl-C during a turn: on a terminal it asks first;
// without one there is nobody to ask, so it cancels.
func (f *follower) interrupted(ctx context.Context, _ os.Signal) error {
	if f.sid == "" {
		return &Error{Code: ExitError, Err: errors.New("interrupted")}
	}
	if f.ui.canAsk() {
		f.r.newline()
		ans, again := f.ui.ask(ctx, "Cancel the running turn? [y/N] ")
		if !again && !isYes(ans) {
			f.a.out.note("%s", f.a.out.errPaint(dim, "continuing (the turn keeps running)"))
			return nil
		}
	}
	err := f.c.call(ctx, "POST", "/api/sessions/"+f.sid+"/cancel", nil, nil, nil, nil)
	var apiErr *APIError
	if err != nil && !(errors.As(err, &apiErr) && apiErr.Status == http.StatusConflict) {
		return &Error{Code: ExitError, Err: fmt.Errorf("interrupted, but the turn could not be cancelled: %w", err)}
	}
	f.a.out.note("%s", f.a.out.errPaint(dim, "cancelling…"))
	return nil
}
