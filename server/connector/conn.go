package connector

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/time/rate"
)

// Conn is one live connection of a connector.
type Conn struct {
	hub         *Hub
	id          Identity
	ws          *websocket.Conn
	ip          string
	connectedAt time.Time
	lastSeen    atomic.Int64 // unix nanoseconds of the last frame received
	gone        chan struct{}
	welcomed    chan struct{}      // closed once the welcome is written: no run may overtake it
	cancelRead  context.CancelFunc // ends Serve's reads, which closes the socket

	mu     sync.Mutex
	hello  Hello
	calls  map[string]*call
	closed bool
	bad    int // refused frames; too many and the connection is dropped
}

// call is one command in flight on a connection.
type call struct {
	out  io.Writer
	max  int64
	got  int64
	done chan Result
}

// maxBadFrames is how many refused frames (malformed, unknown type, unknown
// call id, replayed result) a connection may send before it is dropped.
const maxBadFrames = 50

// Serve runs an accepted, authenticated connection until it ends: it reads
// the hello, answers welcome, registers the connection and reads frames.
func (h *Hub) Serve(ctx context.Context, ws *websocket.Conn, id Identity, ip string) {
	ws.SetReadLimit(MaxFrame)
	ctx, cancelRead := context.WithCancel(ctx)
	defer cancelRead()
	now := h.opt.Now()
	c := &Conn{hub: h, id: id, ws: ws, ip: ip, connectedAt: now.UTC(), gone: make(chan struct{}), welcomed: make(chan struct{}),
		cancelRead: cancelRead, calls: map[string]*call{}}
	c.lastSeen.Store(now.UnixNano())
	log := h.log.With("connector_id", id.ConnectorID, "project_id", id.ProjectID, "ip", ip)
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	f, err := c.read(hctx)
	cancel()
	if err != nil || f.Type != TypeHello || f.Hello == nil {
		log.Warn("connector: no valid hello; connection closed", "err", err)
		_ = ws.Close(websocket.StatusProtocolError, "the first frame must be a hello")
		return
	}
	c.hello = sanitizeHello(*f.Hello)
	// Registered before the welcome goes out: a connector that has read its
	// welcome is online, so a call made at once finds it.
	h.register(c)
	defer func() {
		c.drop(websocket.StatusNormalClosure, "")
		log.Info("connector disconnected", "name", id.Name)
	}()
	if err := c.send(ctx, &Frame{Type: TypeWelcome, Welcome: &Welcome{ConnectorID: id.ConnectorID, Name: id.Name,
		HeartbeatMS: h.opt.Heartbeat.Milliseconds(), MaxFrameLen: MaxFrame}}); err != nil {
		return
	}
	close(c.welcomed)
	log.Info("connector connected", "name", id.Name, "hostname", c.hello.Hostname, "version", c.hello.Version)
	bytesLim := rate.NewLimiter(rate.Limit(h.opt.BytesPerSecond), int(h.opt.BytesPerSecond)+MaxFrame)
	framesLim := rate.NewLimiter(rate.Limit(h.opt.FramesPerSecond), int(h.opt.FramesPerSecond))
	for {
		typ, data, err := ws.Read(ctx)
		if err != nil {
			if websocket.CloseStatus(err) == websocket.StatusMessageTooBig {
				log.Warn("connector: frame over the size limit; connection closed", "limit", MaxFrame)
			}
			return
		}
		c.lastSeen.Store(h.opt.Now().UnixNano())
		// Past its allowance a connection's reader waits: TCP pushes back on
		// the flooding host alone, and every other connection reads on.
		if err := framesLim.Wait(ctx); err != nil {
			return
		}
		if err := bytesLim.WaitN(ctx, min(len(data), bytesLim.Burst())); err != nil {
			return
		}
		c.process(ctx, log, typ, data)
		if c.tooBad() {
			log.Warn("connector: too many refused frames; connection closed", "count", maxBadFrames)
			c.drop(websocket.StatusPolicyViolation, "too many refused frames")
			return
		}
	}
}

// process decodes one frame and acts on it; a frame that is not JSON text
// is refused.
func (c *Conn) process(ctx context.Context, log interface{ Warn(string, ...any) }, typ websocket.MessageType, data []byte) {
	if typ != websocket.MessageText {
		c.refuse(log, "binary frames are not part of the protocol")
		return
	}
	var f Frame
	if err := json.Unmarshal(data, &f); err != nil {
		c.refuse(log, "malformed frame: "+err.Error())
		return
	}
	c.handle(ctx, log, &f)
}

func (c *Conn) handle(ctx context.Context, log interface{ Warn(string, ...any) }, f *Frame) {
	switch f.Type {
	case TypePing:
		_ = c.send(ctx, &Frame{Type: TypePong})
	case TypeOutput:
		cl := c.lookup(f.CallID)
		if cl == nil {
			c.refuse(log, "output for an unknown or finished call "+shortID(f.CallID))
			return
		}
		// Output beyond what the server asked for is not passed on: the
		// connector caps too, and a connector that does not is not trusted.
		if cl.max > 0 && cl.got >= cl.max {
			return
		}
		data := f.Output()
		if cl.max > 0 && cl.got+int64(len(data)) > cl.max {
			data = data[:cl.max-cl.got]
		}
		cl.got += int64(len(data))
		_, _ = cl.out.Write(data)
	case TypeResult:
		c.mu.Lock()
		cl := c.calls[f.CallID]
		delete(c.calls, f.CallID)
		c.mu.Unlock()
		if cl == nil || f.Result == nil {
			c.refuse(log, "result for an unknown or finished call "+shortID(f.CallID)+" (dropped)")
			return
		}
		cl.done <- *f.Result
	default:
		c.refuse(log, "unexpected frame type "+shortID(f.Type))
	}
}

func shortID(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// refuse logs a dropped frame and tells the connector why.
func (c *Conn) refuse(log interface{ Warn(string, ...any) }, why string) {
	c.mu.Lock()
	c.bad++
	n := c.bad
	c.mu.Unlock()
	if n <= 10 || n%10 == 0 {
		log.Warn("connector: frame dropped", "why", why, "refused_so_far", n)
	}
	_ = c.send(context.Background(), &Frame{Type: TypeError, Message: why})
}

func (c *Conn) tooBad() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bad >= maxBadFrames
}

func (c *Conn) lookup(id string) *call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[id]
}

func (c *Conn) forget(id string) {
	c.mu.Lock()
	delete(c.calls, id)
	c.mu.Unlock()
}

func (c *Conn) read(ctx context.Context) (*Frame, error) {
	typ, data, err := c.ws.Read(ctx)
	if err != nil {
		return nil, err
	}
	if typ != websocket.MessageText {
		return nil, errors.New("binary frame")
	}
	var f Frame
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	return &f, nil
}

// send writes one frame; a write that cannot finish in 10 s drops the connection.
func (c *Conn) send(ctx context.Context, f *Frame) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := c.ws.Write(ctx, websocket.MessageText, Encode(f))
	if err != nil {
		c.drop(websocket.StatusGoingAway, "write failed")
	}
	return err
}

// drop closes the connection once; calls in flight end as lost, and the
// hub stops listing it at that moment, not when the close handshake is over.
func (c *Conn) drop(code websocket.StatusCode, reason string) {
	if !c.markGone() {
		return
	}
	// The close handshake waits for the peer at most briefly: a revoked
	// connector must be off within a second. (CloseNow waits for a Close
	// already under way, so it cannot cut that handshake short; cancelling
	// the reader's context can, and Serve returns then.)
	go func() {
		done := make(chan struct{})
		go func() { _ = c.ws.Close(code, reason); close(done) }()
		select {
		case <-done:
		case <-time.After(500 * time.Millisecond):
			c.cancelRead()
		}
	}()
}

// lose drops a connection whose peer is gone (heartbeat missed): there is
// nobody to answer a close handshake, so the socket is closed at once.
func (c *Conn) lose() {
	if c.markGone() {
		go func() { _ = c.ws.CloseNow() }()
	}
}

// markGone marks the connection closed and takes it off the hub before its
// calls are told (so a call that ended lost never finds the host online);
// false if it was already.
func (c *Conn) markGone() bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	c.closed = true
	c.mu.Unlock()
	c.hub.unregister(c)
	close(c.gone)
	return true
}

// sanitizeHello bounds what a connector reports about itself.
func sanitizeHello(h Hello) Hello {
	h.Version, h.Hostname, h.OS, h.Arch = clip(h.Version, 64), clip(h.Hostname, 255), clip(h.OS, 64), clip(h.Arch, 32)
	h.Kind, h.Kubernetes = clip(h.Kind, 32), sanitizeKube(h.Kubernetes)
	if len(h.Labels) > 32 {
		h.Labels = nil
	}
	for k, v := range h.Labels {
		if len(k) > 63 || len(v) > 63 {
			delete(h.Labels, k)
		}
	}
	return h
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
