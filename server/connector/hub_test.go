package connector

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/opsagent/opsagent/internal/testkit"
)

// testHub serves the hub on a loopback HTTP server; each connection's
// connector id comes from the ?id= query (the server proper takes it from
// the token).
func testHub(t *testing.T, opt Options) (*Hub, string) {
	t.Helper()
	h := NewHub(opt)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		id := r.URL.Query().Get("id")
		h.Serve(context.Background(), ws, Identity{ConnectorID: id, OrgID: "o", ProjectID: "p", Name: id}, "127.0.0.1")
	}))
	t.Cleanup(func() { h.Close(); srv.Close() })
	return h, "ws" + strings.TrimPrefix(srv.URL, "http")
}

// rawConn is a hand-driven connector speaking raw frames.
type rawConn struct {
	t  *testing.T
	ws *websocket.Conn
}

func dialRaw(t *testing.T, url, id string) *rawConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url+"/?id="+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(4 * MaxFrame)
	c := &rawConn{t: t, ws: ws}
	t.Cleanup(func() { _ = ws.CloseNow() })
	c.send(&Frame{Type: TypeHello, Hello: &Hello{Version: "test", Hostname: id, OS: "linux"}})
	if f := c.recv(); f.Type != TypeWelcome || f.Welcome.ConnectorID != id {
		t.Fatalf("welcome: %+v", f)
	}
	return c
}

func (c *rawConn) sendRaw(b []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.ws.Write(ctx, websocket.MessageText, b)
}

func (c *rawConn) send(f *Frame) {
	c.t.Helper()
	if err := c.sendRaw(Encode(f)); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawConn) recvErr() (*Frame, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, b, err := c.ws.Read(ctx)
	if err != nil {
		return nil, err
	}
	var f Frame
	if err := json.Unmarshal(b, &f); err != nil {
		c.t.Fatalf("server frame %q: %v", b, err)
	}
	return &f, nil
}

func (c *rawConn) recv() *Frame {
	c.t.Helper()
	f, err := c.recvErr()
	if err != nil {
		c.t.Fatal(err)
	}
	return f
}

// syncBuf is a buffer the hub's reader writes while the test reads.
type syncBuf = testkit.SyncBuffer

func TestBadFramesAreRefusedAndLogged(t *testing.T) {
	h, url := testHub(t, Options{})
	c := dialRaw(t, url, "c1")
	for _, tc := range []struct {
		frame string
		want  string
	}{
		{`{not json`, "malformed frame"},
		{`{"type":"launch_missiles"}`, "unexpected frame type"},
		{`{"type":"output","call_id":"nope","data":"x"}`, "unknown or finished call"},
		{`{"type":"result","call_id":"nope","exit_code":0}`, "unknown or finished call"},
	} {
		if err := c.sendRaw([]byte(tc.frame)); err != nil {
			t.Fatal(err)
		}
		if f := c.recv(); f.Type != TypeError || !strings.Contains(f.Message, tc.want) {
			t.Errorf("%s: got %+v, want an error frame saying %q", tc.frame, f, tc.want)
		}
	}
	// The connection still works: a ping is answered.
	c.send(&Frame{Type: TypePing})
	if f := c.recv(); f.Type != TypePong {
		t.Fatalf("after refused frames: %+v", f)
	}
	if !h.Status("c1").Online {
		t.Fatal("refused frames must not drop a connection below the limit")
	}
}

func TestOversizedFrameClosesTheConnection(t *testing.T) {
	h, url := testHub(t, Options{})
	c := dialRaw(t, url, "big")
	other := dialRaw(t, url, "other")
	big := append(append([]byte(`{"type":"output","call_id":"x","data":"`), bytes.Repeat([]byte("a"), MaxFrame)...), `"}`...)
	_ = c.sendRaw(big)
	_, err := c.recvErr()
	if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Fatalf("got %v, want close 1009 (message too big)", err)
	}
	waitUntil(t, func() bool { return !h.Status("big").Online })
	other.send(&Frame{Type: TypePing})
	if f := other.recv(); f.Type != TypePong {
		t.Fatal("another connector was disturbed")
	}
}

func TestTooManyBadFramesDropTheConnection(t *testing.T) {
	h, url := testHub(t, Options{})
	c := dialRaw(t, url, "noisy")
	go func() {
		for i := 0; i < 2*maxBadFrames; i++ {
			if c.sendRaw([]byte(`garbage`)) != nil {
				return
			}
		}
	}()
	for {
		_, err := c.recvErr()
		if err != nil {
			if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
				t.Fatalf("got %v, want a policy-violation close", err)
			}
			break
		}
	}
	waitUntil(t, func() bool { return !h.Status("noisy").Online })
}

func TestOnlyTheCallsSentAreAnsweredOnce(t *testing.T) {
	h, url := testHub(t, Options{})
	c := dialRaw(t, url, "c1")
	intruder := dialRaw(t, url, "c2")
	var out syncBuf
	type answer struct {
		r   Result
		err error
	}
	done := make(chan answer, 1)
	go func() {
		r, err := h.Call(context.Background(), "c1", Run{Command: "uptime", TimeoutMS: 5000, MaxOutput: 1 << 20}, &out)
		done <- answer{r, err}
	}()
	run := c.recv()
	if run.Type != TypeRun || run.Run.Command != "uptime" || run.CallID == "" {
		t.Fatalf("run frame: %+v", run)
	}
	// Another connector cannot answer a call it was not sent.
	intruder.send(&Frame{Type: TypeOutput, CallID: run.CallID, Data: "forged"})
	intruder.send(&Frame{Type: TypeResult, CallID: run.CallID, Result: &Result{ExitCode: 99}})
	for range 2 {
		if f := intruder.recv(); f.Type != TypeError {
			t.Fatalf("intruder: %+v", f)
		}
	}
	c.send(&Frame{Type: TypeOutput, CallID: run.CallID, Data: "up 3 days\n"})
	c.send(&Frame{Type: TypeResult, CallID: run.CallID, Result: &Result{ExitCode: 0, DurationMS: 5}})
	a := <-done
	if a.err != nil || a.r.ExitCode != 0 || out.String() != "up 3 days\n" {
		t.Fatalf("call: %+v %v %q", a.r, a.err, out.String())
	}
	// A replayed result (and late output) for the finished call is dropped.
	c.send(&Frame{Type: TypeResult, CallID: run.CallID, Result: &Result{ExitCode: 1}})
	c.send(&Frame{Type: TypeOutput, CallID: run.CallID, Data: "replayed"})
	for range 2 {
		if f := c.recv(); f.Type != TypeError || !strings.Contains(f.Message, "unknown or finished") {
			t.Fatalf("replay: %+v", f)
		}
	}
	if out.String() != "up 3 days\n" {
		t.Fatalf("output after the replay: %q", out.String())
	}
}

func TestOutputBeyondTheCapIsNotPassedOn(t *testing.T) {
	h, url := testHub(t, Options{})
	c := dialRaw(t, url, "c1")
	var out syncBuf
	done := make(chan error, 1)
	go func() {
		_, err := h.Call(context.Background(), "c1", Run{Command: "yes", TimeoutMS: 5000, MaxOutput: 10}, &out)
		done <- err
	}()
	run := c.recv()
	c.send(&Frame{Type: TypeOutput, CallID: run.CallID, Data: "0123456789abcdef"})
	c.send(&Frame{Type: TypeOutput, CallID: run.CallID, Data: "more"})
	c.send(&Frame{Type: TypeResult, CallID: run.CallID, Result: &Result{}})
	if err := <-done; err != nil || out.String() != "0123456789" {
		t.Fatalf("got %q %v", out.String(), err)
	}
}

// A connector flooding the server is held back by its own limiter while
// another connector's calls go through.
func TestFloodDoesNotStallOthers(t *testing.T) {
	h, url := testHub(t, Options{FramesPerSecond: 200, BytesPerSecond: 64 << 10})
	flood := dialRaw(t, url, "flood")
	quiet := dialRaw(t, url, "quiet")
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		junk := Encode(&Frame{Type: TypePing})
		for {
			select {
			case <-stop:
				return
			default:
			}
			if flood.sendRaw(junk) != nil {
				return
			}
		}
	}()
	go func() { // drain the pongs
		for {
			if _, err := flood.recvErr(); err != nil {
				return
			}
		}
	}()
	time.Sleep(200 * time.Millisecond)
	for i := 0; i < 20; i++ {
		done := make(chan error, 1)
		go func() {
			_, err := h.Call(context.Background(), "quiet", Run{Command: "true", TimeoutMS: 1000}, &syncBuf{})
			done <- err
		}()
		run := quiet.recv()
		quiet.send(&Frame{Type: TypeResult, CallID: run.CallID, Result: &Result{}})
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a quiet connector's call hung behind a flood")
		}
	}
}

func TestHelloFirstAndLostConnections(t *testing.T) {
	h, url := testHub(t, Options{Heartbeat: 100 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url+"/?id=rude", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = ws.Write(ctx, websocket.MessageText, Encode(&Frame{Type: TypePing}))
	if _, _, err := ws.Read(ctx); websocket.CloseStatus(err) != websocket.StatusProtocolError {
		t.Fatalf("no hello: got %v, want a protocol-error close", err)
	}
	// A silent connection is dropped after the window; its call ends lost.
	c := dialRaw(t, url, "silent")
	done := make(chan error, 1)
	go func() {
		_, err := h.Call(context.Background(), "silent", Run{Command: "sleep 9", TimeoutMS: 60000}, &syncBuf{})
		done <- err
	}()
	c.recv() // the run frame; then nothing, not even pings
	select {
	case err := <-done:
		if err != ErrLost {
			t.Fatalf("got %v, want ErrLost", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a silent connector's call never ended")
	}
	if _, err := h.Call(context.Background(), "silent", Run{}, &syncBuf{}); err != ErrOffline {
		t.Fatalf("call to a dropped connector: %v", err)
	}
}

func waitUntil(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // generous: a loaded machine
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
