package connector

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// A connection declared lost is off the hub at that moment: the call that
// ends "connector lost" and the status that says offline agree, instead of
// the host staying online through a close handshake with a peer that is gone.
func TestLostConnectorIsOfflineWhenItsCallEnds(t *testing.T) {
	h, url := testHub(t, Options{Heartbeat: 100 * time.Millisecond})
	c := dialRaw(t, url, "cut")
	done := make(chan error, 1)
	go func() {
		_, err := h.Call(context.Background(), "cut", Run{Command: "sleep 9", TimeoutMS: 60000}, &syncBuf{})
		done <- err
	}()
	c.recv() // the run frame; then silence, and the close frame is never answered
	select {
	case err := <-done:
		if err != ErrLost {
			t.Fatalf("got %v, want ErrLost", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a silent connector's call never ended")
	}
	if st := h.Status("cut"); st.Online {
		t.Fatalf("status after the call ended lost: online (connected %s), want offline at once", st.ConnectedAt)
	}
	if n := h.Online(); n != 0 {
		t.Fatalf("live connections after the loss: got %d, want 0", n)
	}
}

// "connector lost" comes at the documented window, 2.5 heartbeats after the
// last frame, not at whatever sweep tick follows it (up to 3 heartbeats when
// the sweep ran every half heartbeat). Connections start at staggered
// moments so that some of them fall late in any fixed tick.
func TestLostIsDeclaredAtTheWindow(t *testing.T) {
	hb := 2 * time.Second
	h, url := testHub(t, Options{Heartbeat: hb})
	const n = 5
	late := make([]time.Duration, n)
	var wg sync.WaitGroup
	for i := range n {
		time.Sleep(hb / 2 / n)
		id := fmt.Sprintf("quiet%d", i)
		c := dialRaw(t, url, id)
		last := h.Status(id).LastSeen // the hello was its last frame
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := h.Call(context.Background(), id, Run{Command: "sleep 60", TimeoutMS: 60000}, &syncBuf{})
			if err != ErrLost {
				t.Errorf("%s: got %v, want ErrLost", id, err)
			}
			late[i] = time.Since(last) - h.Window()
		}()
		c.recv()
	}
	wg.Wait()
	for i, d := range late {
		// The tolerance is a fifth of a heartbeat; the old sweep could be
		// a whole half heartbeat late.
		if d < 0 || d > hb/5 {
			t.Errorf("quiet%d declared lost %v after the window of %v, want within [0, %v]", i, d, h.Window(), hb/5)
		}
	}
}
