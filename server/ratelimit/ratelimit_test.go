package ratelimit

import (
	"testing"
	"time"
)

func TestLimiterSlidingWindow(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := New(3, time.Minute)
	l.Now = func() time.Time { return now }
	for i := 0; i < 3; i++ {
		if ok, _ := l.Allow("a"); !ok {
			t.Fatalf("event %d refused, want allowed", i)
		}
	}
	ok, retry := l.Allow("a")
	if ok || retry < time.Second || retry > time.Minute {
		t.Fatalf("got ok=%v retry=%v, want refused with 1s..1m", ok, retry)
	}
	if ok, _ := l.Allow("b"); !ok {
		t.Fatal("other key refused")
	}
	// Half a window later the previous window still weighs 1.5 events.
	now = now.Add(90 * time.Second)
	if ok, _ := l.Allow("a"); !ok {
		t.Fatal("refused after the window slid")
	}
	now = now.Add(10 * time.Minute)
	for i := 0; i < 3; i++ {
		if ok, _ := l.Allow("a"); !ok {
			t.Fatalf("event %d refused after idle", i)
		}
	}
	l.Reset("a")
	if ok, _ := l.Allow("a"); !ok {
		t.Fatal("refused after reset")
	}
}

// Check looks without spending: only Allow counts.
func TestCheckDoesNotRecord(t *testing.T) {
	l := New(2, time.Minute)
	for i := 0; i < 5; i++ {
		if ok, _ := l.Check("k"); !ok {
			t.Fatalf("check %d refused with nothing recorded", i)
		}
	}
	l.Allow("k")
	l.Allow("k")
	if ok, retry := l.Check("k"); ok || retry <= 0 {
		t.Fatalf("check after the limit: got %v %v, want refused with a retry", ok, retry)
	}
}
