package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/opsagent/opsagent/server/connector"
)

// ErrTokenRefused ends the connector: the server no longer accepts its
// token (revoked, rotated, deleted or wrong); retrying cannot help.
var ErrTokenRefused = errors.New("the server refused this connector's token (revoked, rotated, deleted or mistyped); " +
	"create or rotate the token in the console and start the connector with the new one")

// Run connects and serves until ctx ends or the token is refused,
// reconnecting with jittered exponential back-off in between.
func Run(ctx context.Context, cfg Config) error {
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 30 * time.Second
	}
	seen := newSeenCalls(4096)
	backoff := 500 * time.Millisecond
	for {
		welcomed, err := session(ctx, cfg, seen)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, ErrTokenRefused) {
			return err
		}
		if welcomed {
			backoff = 500 * time.Millisecond
		}
		// Full jitter: many connectors of a restarted server do not return at once.
		wait := time.Duration(rand.Int64N(int64(backoff))) + 100*time.Millisecond
		cfg.Logger.Warn("connector: disconnected; reconnecting", "err", err, "in", wait.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		backoff = min(backoff*2, cfg.MaxBackoff)
	}
}

// session is one connection, from dial to drop. It reports whether the
// server welcomed it (the back-off then starts over).
func session(ctx context.Context, cfg Config, seen *seenCalls) (bool, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	dctx, dcancel := context.WithTimeout(ctx, 20*time.Second)
	ws, res, err := websocket.Dial(dctx, cfg.Server+"/api/connectors/connect", &websocket.DialOptions{
		HTTPClient: cfg.Client,
		HTTPHeader: http.Header{"Authorization": {"Bearer " + cfg.Token}, "User-Agent": {"opsagent-connector/" + cfg.Version}},
	})
	dcancel()
	if err != nil {
		if res != nil && res.StatusCode == http.StatusUnauthorized {
			return false, ErrTokenRefused
		}
		return false, err
	}
	defer ws.CloseNow()
	ws.SetReadLimit(connector.MaxFrame)
	s := &sess{cfg: cfg, ws: ws, running: map[string]context.CancelFunc{}, seen: seen}
	h := hello(cfg)
	if cfg.Handler != nil {
		cfg.Handler.Describe(ctx, h)
	}
	if err := s.send(ctx, &connector.Frame{Type: connector.TypeHello, Hello: h}); err != nil {
		return false, err
	}
	hctx, hcancel := context.WithTimeout(ctx, 20*time.Second)
	f, err := s.read(hctx)
	hcancel()
	if err != nil {
		return false, err
	}
	if f.Type != connector.TypeWelcome || f.Welcome == nil {
		return false, fmt.Errorf("expected a welcome, got %q", f.Type)
	}
	w := f.Welcome
	cfg.Logger.Info("connector registered", "server", cfg.Server, "connector_id", w.ConnectorID, "name", w.Name)
	if cfg.Name != "" && cfg.Name != w.Name {
		cfg.Logger.Warn("this host expected another connector name; the server's name stands", "expected", cfg.Name, "server_name", w.Name)
	}
	hb := time.Duration(w.HeartbeatMS) * time.Millisecond
	if hb <= 0 {
		hb = 10 * time.Second
	}
	defer s.killAll() // a command whose result cannot be reported is not left running
	return true, s.serve(ctx, hb)
}

// sess is one live connection's state.
type sess struct {
	cfg     Config
	ws      *websocket.Conn
	seen    *seenCalls
	mu      sync.Mutex
	running map[string]context.CancelFunc
	wg      sync.WaitGroup
}

func (s *sess) serve(ctx context.Context, hb time.Duration) error {
	lastHeard := make(chan struct{}, 1)
	errc := make(chan error, 1)
	go func() {
		for {
			f, err := s.read(ctx)
			if err != nil {
				if websocket.CloseStatus(err) == websocket.StatusPolicyViolation {
					err = fmt.Errorf("the server closed the connection: %w", err)
				}
				errc <- err
				return
			}
			select {
			case lastHeard <- struct{}{}:
			default:
			}
			s.handle(ctx, f)
		}
	}()
	tick := time.NewTicker(hb)
	defer tick.Stop()
	heard := time.Now()
	window := hb*2 + hb/2
	for {
		select {
		case err := <-errc:
			return err
		case <-lastHeard:
			heard = time.Now()
		case <-tick.C:
			if time.Since(heard) > window {
				return fmt.Errorf("the server has been silent for %s", window)
			}
			if err := s.send(ctx, &connector.Frame{Type: connector.TypePing}); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *sess) handle(ctx context.Context, f *connector.Frame) {
	switch f.Type {
	case connector.TypePong:
	case connector.TypeRun:
		if f.Run == nil || f.CallID == "" {
			s.cfg.Logger.Warn("connector: run frame without a command; ignored")
			return
		}
		if !s.seen.add(f.CallID) {
			// The same call id twice: never run a command twice.
			s.cfg.Logger.Warn("connector: a call id seen before was sent again; not run", "call_id", f.CallID)
			_ = s.send(ctx, &connector.Frame{Type: connector.TypeResult, CallID: f.CallID,
				Result: &connector.Result{ExitCode: -1, Error: "this call was already received by the host; it was not run again"}})
			return
		}
		cctx, cancel := context.WithCancel(ctx)
		s.mu.Lock()
		s.running[f.CallID] = cancel
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.running, f.CallID)
				s.mu.Unlock()
				cancel()
			}()
			if s.cfg.Handler != nil {
				s.serveWith(cctx, f.CallID, *f.Run)
				return
			}
			s.execute(cctx, f.CallID, *f.Run)
		}()
	case connector.TypeCancel:
		s.mu.Lock()
		cancel := s.running[f.CallID]
		s.mu.Unlock()
		if cancel != nil {
			s.cfg.Logger.Info("connector: call cancelled by the server; killing its process group", "call_id", f.CallID)
			cancel()
		}
	case connector.TypeError:
		s.cfg.Logger.Warn("connector: the server refused a frame", "message", f.Message)
	default:
		s.cfg.Logger.Warn("connector: unexpected frame from the server", "type", f.Type)
	}
}

func (s *sess) killAll() {
	s.mu.Lock()
	for _, cancel := range s.running {
		cancel()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *sess) send(ctx context.Context, f *connector.Frame) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return s.ws.Write(ctx, websocket.MessageText, connector.Encode(f))
}

func (s *sess) read(ctx context.Context) (*connector.Frame, error) {
	typ, data, err := s.ws.Read(ctx)
	if err != nil {
		return nil, err
	}
	if typ != websocket.MessageText {
		return nil, errors.New("binary frame from the server")
	}
	var f connector.Frame
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("malformed frame from the server: %w", err)
	}
	return &f, nil
}

// seenCalls remembers recent call ids (bounded) so a replayed run frame
// never runs a command twice.
type seenCalls struct {
	mu    sync.Mutex
	set   map[string]struct{}
	order []string
	max   int
}

func newSeenCalls(n int) *seenCalls { return &seenCalls{set: map[string]struct{}{}, max: n} }

func (c *seenCalls) add(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.set[id]; ok {
		return false
	}
	c.set[id] = struct{}{}
	c.order = append(c.order, id)
	if len(c.order) > c.max {
		delete(c.set, c.order[0])
		c.order = c.order[1:]
	}
	return true
}
