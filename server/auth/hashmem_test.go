package auth

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A burst of concurrent hashes returns its memory once, after the last
// hash of the burst, not after each.
func TestHashBurstReturnsMemoryOnce(t *testing.T) {
	h := NewHasher(2)
	var frees atomic.Int32
	h.mem.mu.Lock()
	if h.mem.timer != nil {
		h.mem.timer.Stop()
		h.mem.timer = nil
	}
	h.mem.free = func() { frees.Add(1) }
	h.mem.mu.Unlock()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := h.Hash(context.Background(), "correct horse battery staple"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := frees.Load(); n != 0 {
		t.Fatalf("memory returned %d times during the burst", n)
	}
	// Returned returnAfter after the burst (polled: a loaded machine can
	// run the timer late), and not again: a return per hash would come
	// within the next half second.
	for deadline := time.Now().Add(returnAfter + 10*time.Second); frees.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	if n := frees.Load(); n != 1 {
		t.Fatalf("memory returned %d times after the burst, want 1", n)
	}
}
