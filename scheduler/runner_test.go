package scheduler

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newTestRunner(t *testing.T) (*Runner, *logBuf) {
	t.Helper()
	logs := &logBuf{}
	return New(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))), logs
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A job that panics is recovered: the process lives, the panic is logged and
// the job runs again at its next tick; other jobs are unaffected.
func TestPanickingJobIsRecovered(t *testing.T) {
	t.Parallel()
	r, logs := newTestRunner(t)
	var panics, ok, failed atomic.Int32
	if err := r.Add("boom", "@every 1s", func(context.Context) error { panics.Add(1); panic("kaboom") }); err != nil {
		t.Fatal(err)
	}
	if err := r.Add("fine", "@every 1s", func(context.Context) error { ok.Add(1); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := r.Add("fails", "@every 1s", func(context.Context) error { failed.Add(1); return errors.New("disk on fire") }); err != nil {
		t.Fatal(err)
	}
	r.Start()
	defer r.Stop()
	waitFor(t, "two panicking runs", func() bool { return panics.Load() >= 2 })
	waitFor(t, "the other jobs", func() bool { return ok.Load() >= 2 && failed.Load() >= 2 })
	if !strings.Contains(logs.String(), "kaboom") || !strings.Contains(logs.String(), "disk on fire") || !strings.Contains(logs.String(), "job=fails") {
		t.Fatalf("panic and failure not logged:\n%s", logs.String())
	}
}

// Stop cancels the jobs' context and returns only after running jobs return.
func TestStopWaitsForRunningJobs(t *testing.T) {
	t.Parallel()
	r, _ := newTestRunner(t)
	started := make(chan struct{})
	var finished atomic.Bool
	var once sync.Once
	err := r.Add("slow", "@every 1s", func(ctx context.Context) error {
		once.Do(func() { close(started) })
		<-ctx.Done()                       // told to stop...
		time.Sleep(200 * time.Millisecond) // ...and takes a moment to clean up
		finished.Store(true)
		return ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("job never started")
	}
	r.Stop()
	if !finished.Load() {
		t.Fatal("Stop returned while the job was still running")
	}
}

// A run still going when its next tick comes is not started twice.
func TestSkipIfStillRunningAndReplace(t *testing.T) {
	t.Parallel()
	r, _ := newTestRunner(t)
	var running, maxRunning, runs atomic.Int32
	release := make(chan struct{})
	err := r.Add("long", "@every 1s", func(ctx context.Context) error {
		n := running.Add(1)
		defer running.Add(-1)
		if n > maxRunning.Load() {
			maxRunning.Store(n)
		}
		runs.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	waitFor(t, "first run", func() bool { return runs.Load() == 1 })
	time.Sleep(2200 * time.Millisecond) // two more ticks pass while it runs
	close(release)
	r.Stop()
	if maxRunning.Load() != 1 {
		t.Fatalf("overlapping runs: %d at once", maxRunning.Load())
	}
	if err := r.Add("bad", "every now and then", func(context.Context) error { return nil }); err == nil {
		t.Fatal("a bad spec was accepted")
	}
	// Adding a name again replaces the job; Remove unschedules it.
	_ = r.Add("b", "@hourly", func(context.Context) error { return nil })
	_ = r.Add("b", "@daily", func(context.Context) error { return nil })
	if got := strings.Join(r.Jobs(), ","); got != "b,long" {
		t.Fatalf("jobs: got %s, want b,long", got)
	}
	r.Remove("long")
	if got := strings.Join(r.Jobs(), ","); got != "b" {
		t.Fatalf("jobs after Remove: got %s", got)
	}
}

func TestParseSchedule(t *testing.T) {
	for _, ok := range []string{"*/5 * * * *", "@hourly", "0 9 * * 1-5"} {
		if _, err := ParseSchedule(ok, "Europe/Paris"); err != nil {
			t.Fatalf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"* * * *", "61 * * * *", "@sometimes", "* * * * * *"} {
		if _, err := ParseSchedule(bad, ""); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
	if _, err := ParseSchedule("@daily", "Mars/Olympus"); err == nil {
		t.Fatal("unknown time zone accepted")
	}
	s, err := ParseSchedule("0 9 * * *", "America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)
	if next := s.Next(from).UTC(); next.Hour() != 14 {
		t.Fatalf("09:00 New York in January is 14:00 UTC; got %v", next)
	}
}
