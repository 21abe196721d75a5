package scheduler_test

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opsagent/opsagent/scheduler"
	"github.com/opsagent/opsagent/store"
)

// manyTasks creates n enabled every-minute tasks in one transaction.
func manyTasks(tb testing.TB, fx *fixture, n int) {
	tb.Helper()
	ts := make([]*store.Task, n)
	for i := range ts {
		ts[i] = &store.Task{OrgID: fx.orgID, ProjectID: fx.projectID, Name: "t", Prompt: "p", AgentType: "sre",
			Schedule: "* * * * *", Timezone: "UTC", Enabled: true, MissedFirePolicy: "run_once", OverlapPolicy: "skip",
			TimeoutSeconds: 60, MaxSteps: 5}
	}
	if err := fx.db.CreateTasks(context.Background(), ts, scheduler.NextRun); err != nil {
		tb.Fatal(err)
	}
}

// latencyRecorder notes the wall time of each executor call.
type latencyRecorder struct {
	mu    sync.Mutex
	first time.Time
	last  time.Time
	n     int
}

func (l *latencyRecorder) Execute(context.Context, *scheduler.Run) (scheduler.Outcome, error) {
	now := time.Now()
	l.mu.Lock()
	if l.n == 0 {
		l.first = now
	}
	l.last = now
	l.n++
	l.mu.Unlock()
	return scheduler.Outcome{}, nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Test1000TasksFireOnce: 1,000 enabled tasks due in the same minute each
// run exactly once. It logs the figures; BenchmarkDispatch1000 measures them.
func Test1000TasksFireOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 tasks")
	}
	fx := newFixture(t, t0)
	manyTasks(t, fx, 1000)
	rec := newRecorder(false)
	e := fx.engine(rec, func(o *scheduler.TaskOptions) { o.OrgConcurrency = 1000 })
	fx.clk.Set(t0.Add(time.Minute))
	start := time.Now()
	r := mustTick(t, e)
	e.Wait()
	if r.Recorded != 1000 || rec.total() != 1000 {
		t.Fatalf("recorded %d, executed %d", r.Recorded, rec.total())
	}
	rec.assertOnce(t)
	if r := mustTick(t, e); r.Recorded != 0 {
		t.Fatalf("second tick recorded %d", r.Recorded)
	}
	t.Logf("1000 fires recorded, dispatched and finished in %v", time.Since(start))
}

// BenchmarkDispatch1000 is one minute boundary with 1,000 due tasks: record
// every fire, dispatch every run to a no-op executor, save every outcome.
// Reports wall time to the first and last executor call and CPU per fire.
func BenchmarkDispatch1000(b *testing.B) {
	fx := newFixture(b, t0)
	manyTasks(b, fx, 1000)
	lat := &latencyRecorder{}
	e := fx.engine(lat, func(o *scheduler.TaskOptions) { o.OrgConcurrency = 1000 })
	var firstSum, lastSum, cpuSum time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fx.clk.Set(t0.Add(time.Duration(i+1) * time.Minute))
		lat.mu.Lock()
		lat.n = 0
		lat.mu.Unlock()
		cpu0, start := cpuTime(), time.Now()
		if _, err := e.Tick(context.Background()); err != nil {
			b.Fatal(err)
		}
		e.Wait()
		cpuSum += cpuTime() - cpu0
		if lat.n != 1000 {
			b.Fatalf("executed %d", lat.n)
		}
		firstSum += lat.first.Sub(start)
		lastSum += lat.last.Sub(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(firstSum.Milliseconds())/n, "ms-to-first-run")
	b.ReportMetric(float64(lastSum.Milliseconds())/n, "ms-to-last-run")
	b.ReportMetric(float64(cpuSum.Microseconds())/n/1000, "cpu-us/fire")
}

// BenchmarkIdleTick1000 is the steady-state cost: a tick with 1,000
// enabled tasks of which none is due (one indexed query each for due
// tasks and pending runs).
func BenchmarkIdleTick1000(b *testing.B) {
	fx := newFixture(b, t0)
	manyTasks(b, fx, 1000)
	e := fx.engine(newRecorder(false))
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r, err := e.Tick(context.Background()); err != nil || r.Recorded != 0 {
			b.Fatal(r, err)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/tick")
}
