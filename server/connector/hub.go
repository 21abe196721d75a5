package connector

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Identity is who an authenticated connection speaks for: one connector of
// one project. The server resolves it from the token before the upgrade.
type Identity struct {
	ConnectorID string
	OrgID       string
	ProjectID   string
	Name        string
}

// Seen is what the hub reports for the store: host facts and last contact.
type Seen struct {
	ConnectorID string
	Hello       Hello
	IP          string
	At          time.Time
}

// Options configure a Hub.
type Options struct {
	// Heartbeat is how often a connector pings (default 10 s). A connection
	// silent for Window() is declared lost and its calls end.
	Heartbeat time.Duration
	// Seen receives host facts and last-seen times in batches (on connect,
	// on disconnect, and every FlushEvery for the live ones).
	Seen       func(ctx context.Context, seen []Seen)
	FlushEvery time.Duration
	// BytesPerSecond and FramesPerSecond bound what one connection may send;
	// past them its reader waits, so a flood slows only its own sender.
	BytesPerSecond, FramesPerSecond float64
	Logger                          *slog.Logger
	Now                             func() time.Time
}

// Hub holds the live connections, one per connector. Safe for concurrent use.
type Hub struct {
	opt   Options
	log   *slog.Logger
	mu    sync.Mutex
	conns map[string]*Conn
	stop  chan struct{}
	once  sync.Once
	wg    sync.WaitGroup
}

// Errors a call can end with; their texts are written for the model.
var (
	ErrOffline = errors.New("the connector is not connected")
	ErrLost    = errors.New("connector lost: the connection to the host dropped before the command finished; " +
		"whether it completed there is unknown, and it was not retried")
)

// NewHub starts a hub and its sweeper (heartbeat checks, last-seen flushes).
func NewHub(opt Options) *Hub {
	if opt.Heartbeat <= 0 {
		opt.Heartbeat = 10 * time.Second
	}
	if opt.FlushEvery <= 0 {
		opt.FlushEvery = time.Minute
	}
	if opt.BytesPerSecond <= 0 {
		opt.BytesPerSecond = 32 << 20
	}
	if opt.FramesPerSecond <= 0 {
		opt.FramesPerSecond = 4000
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	h := &Hub{opt: opt, log: opt.Logger, conns: map[string]*Conn{}, stop: make(chan struct{})}
	h.wg.Add(1)
	go h.sweep()
	return h
}

// Window is how long a connection may stay silent before it counts as lost.
func (h *Hub) Window() time.Duration { return h.opt.Heartbeat*2 + h.opt.Heartbeat/2 }

// Heartbeat is the interval connectors are told to ping at.
func (h *Hub) Heartbeat() time.Duration { return h.opt.Heartbeat }

// Close drops every connection and stops the sweeper.
func (h *Hub) Close() {
	h.once.Do(func() {
		close(h.stop)
		h.mu.Lock()
		conns := make([]*Conn, 0, len(h.conns))
		for id, c := range h.conns {
			conns = append(conns, c)
			delete(h.conns, id)
		}
		h.mu.Unlock()
		for _, c := range conns {
			c.drop(websocket.StatusGoingAway, "server shutting down")
		}
		// Taken off above, so reported here in one batch, not one by one.
		h.report(conns...)
		h.wg.Wait()
	})
}

// Status is a connector's live state.
type Status struct {
	Online      bool
	Hello       Hello
	IP          string
	ConnectedAt time.Time
	LastSeen    time.Time
	Running     int // calls in flight
}

// Status reports whether a connector is connected, and its facts if so.
func (h *Hub) Status(connectorID string) Status {
	h.mu.Lock()
	c := h.conns[connectorID]
	h.mu.Unlock()
	if c == nil {
		return Status{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return Status{Online: true, Hello: c.hello, IP: c.ip, ConnectedAt: c.connectedAt,
		LastSeen: time.Unix(0, c.lastSeen.Load()).UTC(), Running: len(c.calls)}
}

// Online counts the live connections.
func (h *Hub) Online() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// Drop closes a connector's live connection, if any (revoked, rotated,
// deleted): its calls end as lost at once.
func (h *Hub) Drop(connectorID, reason string) bool {
	h.mu.Lock()
	c := h.conns[connectorID]
	h.mu.Unlock()
	if c == nil {
		return false
	}
	c.drop(websocket.StatusPolicyViolation, reason)
	return true
}

// Call runs one command on a connector and streams its output into out as
// it arrives (out must not block for long: it runs on the connection's
// reader). It returns when the connector reports the end, when ctx ends
// (the connector is told to kill the command), or when the connection is
// lost (ErrLost).
func (h *Hub) Call(ctx context.Context, connectorID string, run Run, out io.Writer) (Result, error) {
	h.mu.Lock()
	c := h.conns[connectorID]
	h.mu.Unlock()
	if c == nil {
		return Result{}, ErrOffline
	}
	id := newCallID()
	cl := &call{out: out, max: run.MaxOutput, done: make(chan Result, 1)}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return Result{}, ErrOffline
	}
	c.calls[id] = cl
	c.mu.Unlock()
	defer c.forget(id)
	select {
	case <-c.welcomed:
	case <-c.gone:
		return Result{}, ErrLost
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	if err := c.send(ctx, &Frame{Type: TypeRun, CallID: id, Run: &run}); err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return Result{}, ErrLost
	}
	// The connector enforces the timeout; the server waits a grace period
	// beyond it before giving up on the report.
	guard := time.NewTimer(time.Duration(run.TimeoutMS)*time.Millisecond + h.Window())
	defer guard.Stop()
	select {
	case r := <-cl.done:
		return r, nil
	case <-c.gone:
		return Result{}, ErrLost
	case <-guard.C:
		h.log.Warn("connector: no result within the timeout and heartbeat window", "connector_id", connectorID, "call_id", id)
		_ = c.send(context.Background(), &Frame{Type: TypeCancel, CallID: id})
		return Result{}, ErrLost
	case <-ctx.Done():
	}
	// Cancelled: ask the connector to kill the process group and wait a
	// moment for its report, so the output so far is complete.
	_ = c.send(context.Background(), &Frame{Type: TypeCancel, CallID: id})
	select {
	case <-cl.done:
	case <-c.gone:
	case <-time.After(3 * time.Second):
	}
	return Result{}, ctx.Err()
}

func newCallID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// register makes c the connector's live connection, replacing an older one.
func (h *Hub) register(c *Conn) {
	h.mu.Lock()
	old := h.conns[c.id.ConnectorID]
	h.conns[c.id.ConnectorID] = c
	h.mu.Unlock()
	if old != nil {
		h.log.Warn("connector: a new connection replaces the live one (is the token used on two hosts?)",
			"connector_id", c.id.ConnectorID, "old_ip", old.ip, "new_ip", c.ip)
		old.drop(websocket.StatusPolicyViolation, "replaced by a newer connection of the same connector")
	}
	h.report(c)
}

// unregister takes c off the hub if it is still the connector's live
// connection, and reports its last contact; false if it was not (already
// taken off, or replaced by a newer connection whose facts stand).
func (h *Hub) unregister(c *Conn) bool {
	h.mu.Lock()
	mine := h.conns[c.id.ConnectorID] == c
	if mine {
		delete(h.conns, c.id.ConnectorID)
	}
	h.mu.Unlock()
	if mine {
		h.report(c)
	}
	return mine
}

func (h *Hub) report(cs ...*Conn) {
	if h.opt.Seen == nil || len(cs) == 0 {
		return
	}
	seen := make([]Seen, 0, len(cs))
	for _, c := range cs {
		c.mu.Lock()
		seen = append(seen, Seen{ConnectorID: c.id.ConnectorID, Hello: c.hello, IP: c.ip, At: time.Unix(0, c.lastSeen.Load()).UTC()})
		c.mu.Unlock()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.opt.Seen(ctx, seen)
}

// sweep drops silent connections and flushes last-seen times. One
// goroutine for the whole hub: idle connections cost no timers. It sleeps
// until the earliest moment a connection can outlive the window, so a
// connection is declared lost at Window() after its last frame, not at the
// next fixed tick (which made it up to 3 heartbeats).
func (h *Hub) sweep() {
	defer h.wg.Done()
	timer := time.NewTimer(h.opt.Heartbeat / 2)
	defer timer.Stop()
	lastFlush := h.opt.Now()
	for {
		select {
		case <-h.stop:
			return
		case <-timer.C:
		}
		now := h.opt.Now()
		h.mu.Lock()
		live := make([]*Conn, 0, len(h.conns))
		for _, c := range h.conns {
			live = append(live, c)
		}
		h.mu.Unlock()
		var fresh []*Conn
		// A connection registered after this pass has a deadline a whole
		// window away, later than the longest sleep below.
		next := h.opt.Heartbeat / 2
		for _, c := range live {
			left := h.Window() - now.Sub(time.Unix(0, c.lastSeen.Load()))
			if left < 0 {
				h.log.Warn("connector: heartbeat missed; connection dropped", "connector_id", c.id.ConnectorID, "window", h.Window())
				c.lose()
				continue
			}
			next = min(next, left)
			fresh = append(fresh, c)
		}
		if now.Sub(lastFlush) >= h.opt.FlushEvery {
			lastFlush = now
			h.report(fresh...)
		}
		// A frame arriving meanwhile only moves a deadline later: waking
		// early costs one pass, never a late drop.
		timer.Reset(max(next+time.Millisecond, 5*time.Millisecond))
	}
}
