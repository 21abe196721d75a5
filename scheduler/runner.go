// Package scheduler runs the platform's background work on robfig/cron:
// named jobs that recover from panics, skip a tick while the previous run is
// still going, and are waited for on Stop.
package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
)

// Parser accepts the 5-field cron syntax and descriptors such as @hourly.
var Parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule validates a 5-field expression (or descriptor) in a time zone.
func ParseSchedule(expr, tz string) (cron.Schedule, error) {
	if tz != "" {
		if _, err := time.LoadLocation(tz); err != nil {
			return nil, fmt.Errorf("unknown time zone %q", tz)
		}
		expr = "CRON_TZ=" + tz + " " + expr
	}
	return Parser.Parse(expr)
}

// Runner owns the cron instance and the context every job runs under.
type Runner struct {
	cron   *cron.Cron
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	names  map[string]cron.EntryID
}

// New returns a stopped runner.
func New(log *slog.Logger) *Runner {
	ctx, cancel := context.WithCancel(context.Background())
	// Order matters: SkipIfStillRunning must be outermost. robfig's version
	// releases its slot without a defer, so a panic passing through it would
	// keep the job from ever running again; recovering inside it prevents that.
	c := cron.New(cron.WithParser(Parser), cron.WithLocation(time.UTC),
		cron.WithChain(cron.SkipIfStillRunning(cronLogger{log}), cron.Recover(cronLogger{log})))
	return &Runner{cron: c, log: log, ctx: ctx, cancel: cancel, names: map[string]cron.EntryID{}}
}

// Add schedules a named job; a second job of the same name replaces the first.
func (r *Runner) Add(name, spec string, job func(ctx context.Context) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.names[name]; ok {
		r.cron.Remove(old)
	}
	id, err := r.cron.AddFunc(spec, func() {
		start := time.Now()
		defer func() {
			if p := recover(); p != nil {
				r.log.Error("job panicked", "job", name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			}
		}()
		if err := job(r.ctx); err != nil && r.ctx.Err() == nil {
			r.log.Error("job failed", "job", name, "err", err, "duration", time.Since(start))
			return
		}
		r.log.Debug("job done", "job", name, "duration", time.Since(start))
	})
	if err != nil {
		return fmt.Errorf("job %s: %w", name, err)
	}
	r.names[name] = id
	return nil
}

// Remove unschedules a named job.
func (r *Runner) Remove(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id, ok := r.names[name]; ok {
		r.cron.Remove(id)
		delete(r.names, name)
	}
}

// Jobs lists the names of the scheduled jobs, sorted (for status output and checks).
func (r *Runner) Jobs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.names))
	for n := range r.names {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Start begins running jobs.
func (r *Runner) Start() { r.cron.Start() }

// Stop cancels the jobs' context and waits for running jobs to return.
func (r *Runner) Stop() {
	r.cancel()
	<-r.cron.Stop().Done()
}

type cronLogger struct{ l *slog.Logger }

func (c cronLogger) Info(msg string, kv ...any) { c.l.Debug("cron: "+msg, kv...) }
func (c cronLogger) Error(err error, msg string, kv ...any) {
	c.l.Error("cron: "+msg, append(kv, "err", err)...)
}
