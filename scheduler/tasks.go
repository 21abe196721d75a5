package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opsagent/opsagent/server/telemetry"
	"github.com/opsagent/opsagent/store"
)

// TaskOptions configure the task scheduler. Zero values take the defaults.
type TaskOptions struct {
	// Executor runs each task run; nil fails every run with ErrNoLLM.
	Executor Executor
	// Now is the clock fires are computed with; tests inject a manual one.
	Now    func() time.Time
	Logger *slog.Logger
	// OrgConcurrency caps the runs of one org executing at once (default 4);
	// further runs wait pending, in order, and survive a restart.
	OrgConcurrency int
	// MisfireGrace is how late a fire may be and still count as on time
	// (default 1 minute). Later fires were missed and follow the task's
	// missed_fire_policy.
	MisfireGrace time.Duration
	// TickInterval is how often the loop looks for due tasks (default 1s).
	TickInterval time.Duration
	// BatchSize bounds the fires recorded in one transaction (default 200).
	BatchSize int
	// Telemetry is told about each recorded fire (default: nothing).
	Telemetry telemetry.Scheduler
	// Leadership, when set, elects the one server of a cluster that records
	// and dispatches (store.Leader); the others stand by and take over when
	// it dies. Nil: this server always does.
	Leadership Leadership
}

// Leadership elects one ticking server among several sharing a database.
type Leadership interface {
	Run(ctx context.Context)
	IsLeader() bool
}

// Tasks is the task scheduler: it records every due fire of every enabled
// task durably (store.RecordFires), then dispatches pending runs to the
// Executor under the overlap policy and the per-org concurrency limit.
//
// Reading due tasks from the database on each tick (one indexed query)
// rather than keeping a cron entry per task means an edit, a disable or a
// delete takes effect on the next tick without any restart or cache.
type Tasks struct {
	db   *store.DB
	exec Executor
	now  func() time.Time
	log  *slog.Logger
	opt  TaskOptions

	base   context.Context // executions run under it; cancelled by Stop
	cancel context.CancelFunc
	wg     sync.WaitGroup // in-flight executions
	loopWG sync.WaitGroup
	wake   chan struct{}

	lastTick atomic.Int64 // unix nanoseconds of the last finished tick; /readyz reads it

	recordMu   sync.Mutex // one Record at a time
	dispatchMu sync.Mutex // one Dispatch at a time; guards the maps below
	// freed: a run ended and released its slots since the last Dispatch
	// began; runs ending together then start their successors in one
	// Dispatch (one transaction) instead of one each.
	freed      bool
	orgRunning map[string]int
	taskBusy   map[string]bool
}

// NewTasks returns a stopped scheduler over db.
func NewTasks(db *store.DB, o TaskOptions) *Tasks {
	if o.Executor == nil {
		o.Executor = Unconfigured{}
	}
	if o.Now == nil {
		o.Now = func() time.Time { return time.Now().UTC() }
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.OrgConcurrency <= 0 {
		o.OrgConcurrency = 4
	}
	if o.MisfireGrace <= 0 {
		o.MisfireGrace = time.Minute
	}
	if o.TickInterval <= 0 {
		o.TickInterval = time.Second
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 200
	}
	if o.Telemetry == nil {
		o.Telemetry = telemetry.Nop{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Tasks{db: db, exec: o.Executor, now: o.Now, log: o.Logger, opt: o, base: ctx, cancel: cancel,
		wake: make(chan struct{}, 1), orgRunning: map[string]int{}, taskBusy: map[string]bool{}}
}

// wakeGap is the least time between two ticks asked for by Wake: a run
// recorded by a webhook starts at most this much later than it could.
const wakeGap = 20 * time.Millisecond

// Start recovers and then ticks every TickInterval (and on Wake) until ctx
// ends or Stop is called.
func (e *Tasks) Start(ctx context.Context) error {
	leads := e.leads()
	if leads {
		if err := e.Recover(ctx); err != nil {
			return err
		}
	}
	if l := e.opt.Leadership; l != nil {
		e.loopWG.Add(1)
		go func() {
			defer e.loopWG.Done()
			lctx, cancel := context.WithCancel(ctx)
			defer cancel()
			go func() {
				<-e.base.Done()
				cancel()
			}()
			l.Run(lctx)
		}()
	}
	e.loopWG.Add(1)
	go func() {
		defer e.loopWG.Done()
		t := time.NewTicker(e.opt.TickInterval)
		defer t.Stop()
		var lastWoken time.Time
		lastResume := time.Now() // Recover just resumed what there was
		for {
			select {
			case <-ctx.Done():
				return
			case <-e.base.Done():
				return
			case <-t.C:
			case <-e.wake:
				// Woken ticks are at least wakeGap apart: under an alert
				// storm every ingest batch wakes the loop, and each tick
				// reads the pending runs (two queries); the batches of a
				// wakeGap now share one tick (wakes meanwhile coalesce).
				if wait := wakeGap - time.Since(lastWoken); wait > 0 {
					select {
					case <-ctx.Done():
						return
					case <-e.base.Done():
						return
					case <-time.After(wait):
					}
				}
				lastWoken = time.Now()
			}
			if !e.leads() {
				// A standby is healthy; it recovers when it takes over.
				leads = false
				e.lastTick.Store(time.Now().UnixNano())
				continue
			}
			if !leads {
				// Taking over: the runs the last leader left running resume
				// from their checkpoints (or fail as interrupted without
				// one), its pending ones are dispatched.
				if err := e.Recover(ctx); err != nil {
					e.log.Error("task scheduler takeover", "err", err)
					continue
				}
				leads = true
			}
			if e.db.Shared() && time.Since(lastResume) >= store.RunLease {
				// A run of a server that died (its run lock gone with it)
				// goes on here, within about one lease.
				lastResume = time.Now()
				if _, err := e.ResumeInterrupted(ctx); err != nil && ctx.Err() == nil {
					e.log.Error("task runs not resumed", "err", err)
				}
			}
			if _, err := e.Tick(ctx); err != nil && ctx.Err() == nil {
				e.log.Error("task scheduler tick", "err", err)
				continue
			}
			e.lastTick.Store(time.Now().UnixNano())
		}
	}()
	return nil
}

// SetClock replaces the clock fires are computed with. Call it before Start
// (serve uses it only for the test-only OPSAGENT_TEST_SCHEDULER_CLOCK).
func (e *Tasks) SetClock(now func() time.Time) { e.now = now }

func (e *Tasks) leads() bool { return e.opt.Leadership == nil || e.opt.Leadership.IsLeader() }

// Stop ends the loop, cancels running executions (they end failed with an
// interruption reason) and waits for them.
func (e *Tasks) Stop() {
	e.cancel()
	e.loopWG.Wait()
	e.wg.Wait()
}

// Ticking reports whether the loop finished a tick within three tick
// intervals (a stuck or failing database stops it), and when the last was.
// Before the first tick it reports true: a start is not a failure.
func (e *Tasks) Ticking(now time.Time) (ok bool, last time.Time, interval time.Duration) {
	n := e.lastTick.Load()
	if n == 0 {
		return true, time.Time{}, e.opt.TickInterval
	}
	last = time.Unix(0, n)
	return now.Sub(last) <= 3*e.opt.TickInterval+time.Second, last, e.opt.TickInterval
}

// Wake asks the loop to tick now (a task was created, changed or triggered).
func (e *Tasks) Wake() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Wait blocks until no execution is in flight (tests, benchmarks).
func (e *Tasks) Wait() { e.wg.Wait() }

// TickResult counts what one tick did.
type TickResult struct {
	Recorded   int // runs recorded (pending or skipped by overlap)
	Dispatched int // runs handed to the executor
}

// Tick records the fires due now and dispatches what may start.
func (e *Tasks) Tick(ctx context.Context) (TickResult, error) {
	var r TickResult
	var err error
	if r.Recorded, err = e.Record(ctx); err != nil {
		return r, err
	}
	r.Dispatched, err = e.Dispatch(ctx)
	return r, err
}

// Record writes every due fire (batch by batch, each batch one transaction)
// without dispatching anything.
func (e *Tasks) Record(ctx context.Context) (int, error) {
	e.recordMu.Lock()
	defer e.recordMu.Unlock()
	now := e.now().UTC()
	total := 0
	for {
		due, err := e.db.FindDueTasks(ctx, now, e.opt.BatchSize)
		if err != nil || len(due) == 0 {
			return total, err
		}
		fires := make([]store.Fire, len(due))
		for i := range due {
			fires[i] = PlanFire(&due[i], now, e.opt.MisfireGrace)
			if fires[i].Dropped > 0 {
				e.log.Warn("missed task fires skipped (missed_fire_policy skip)", "task_id", due[i].ID, "dropped", fires[i].Dropped)
			}
			if fires[i].NextRunAt == nil {
				e.log.Error("task schedule no longer parses; it stops firing until edited", "task_id", due[i].ID, "schedule", due[i].Schedule)
			}
		}
		res, err := e.db.RecordFires(ctx, fires)
		if err != nil {
			return total, err
		}
		for i, r := range res {
			if r.SessionID != "" && i < len(fires) {
				e.opt.Telemetry.Fired(now.Sub(fires[i].ScheduledFor))
			}
		}
		for _, r := range res {
			if r.SessionID != "" {
				total++
			}
		}
		if len(due) < e.opt.BatchSize {
			return total, nil
		}
	}
}

// Dispatch starts pending runs, oldest first, while their org is under its
// concurrency limit and no earlier run of the same task is executing (so a
// queued run waits for the one before it).
func (e *Tasks) Dispatch(ctx context.Context) (int, error) {
	if e.base.Err() != nil {
		return 0, nil
	}
	e.dispatchMu.Lock()
	defer e.dispatchMu.Unlock()
	return e.dispatchLocked(ctx)
}

func (e *Tasks) dispatchLocked(ctx context.Context) (int, error) {
	e.freed = false
	pending, err := e.db.FindPendingRuns(ctx, 2000)
	if err != nil {
		return 0, err
	}
	// The runs that may start are reserved (their task busy, their org's
	// count up), then started in one transaction (one commit for all).
	var picked []*store.PendingRun
	var starts []store.RunStart
	for i := range pending {
		p := &pending[i]
		if e.taskBusy[p.Task.ID] || e.orgRunning[p.Task.OrgID] >= e.opt.OrgConcurrency {
			continue
		}
		e.taskBusy[p.Task.ID] = true
		e.orgRunning[p.Task.OrgID]++
		picked = append(picked, p)
		starts = append(starts, store.RunStart{SessionID: p.Session.ID, TaskID: p.Task.ID})
	}
	if len(starts) == 0 {
		return 0, nil
	}
	ok, err := e.db.StartTaskRuns(ctx, starts)
	started := 0
	for i, p := range picked {
		if err != nil || !ok[i] {
			e.releaseLocked(p.Task.ID, p.Task.OrgID)
			continue
		}
		started++
		e.wg.Add(1)
		go e.run(*p, false, nil)
	}
	return started, err
}

// releaseLocked frees a task's slot and its org's (dispatchMu held).
func (e *Tasks) releaseLocked(taskID, orgID string) {
	delete(e.taskBusy, taskID)
	e.orgRunning[orgID]--
	if e.orgRunning[orgID] <= 0 {
		delete(e.orgRunning, orgID)
	}
}

// run executes one run (resume: from its checkpoint, see ResumeInterrupted),
// saves its outcome and frees its slots; release, when set, gives up the
// run lock ResumeInterrupted took.
func (e *Tasks) run(p store.PendingRun, resume bool, release func()) {
	defer e.wg.Done()
	t := &p.Task
	budget := Budget{MaxSteps: t.MaxSteps, TimeoutSeconds: t.TimeoutSeconds, MaxCostUSD: t.MaxCostUSD}
	run := &Run{SessionID: p.Session.ID, TaskID: t.ID, OrgID: t.OrgID, ProjectID: t.ProjectID, TaskName: t.Name,
		AgentType: t.AgentType, TriggerSource: p.Session.TriggerSource, ScheduledFor: p.ScheduledFor,
		MissedFires: p.MissedFires, CreatedBy: p.Session.CreatedBy, Budget: budget, Input: p.Input, Resume: resume}
	run.Prompt = RenderPrompt(PromptInput{TaskName: t.Name, Description: t.Description, Prompt: t.Prompt,
		AgentType: t.AgentType, Trigger: run.TriggerSource, ScheduledFor: p.ScheduledFor, Timezone: t.Timezone,
		MissedFires: p.MissedFires, Budget: budget, Input: p.Input})
	timeout := time.Duration(max(t.TimeoutSeconds, 1)) * time.Second
	ctx, cancel := context.WithTimeout(e.base, timeout)
	out, err := e.safeExecute(ctx, run)
	deadline := errors.Is(ctx.Err(), context.DeadlineExceeded)
	cancel()
	if release != nil {
		release()
	}
	if err == nil && out.Suspended {
		// Checkpointed for a resume (or resumed elsewhere): the run is not
		// over, so neither its status nor its task's last run changes.
		e.log.Info("task run interrupted; it resumes from its last checkpoint", "task_id", t.ID, "session_id", run.SessionID)
		e.freeSlots(t.ID, t.OrgID)
		return
	}
	tr := store.SessionTransition{To: out.Status, Reason: out.Reason, Model: out.Model, Summary: out.Summary,
		TokensIn: out.TokensIn, TokensOut: out.TokensOut, Cost: out.Cost}
	switch {
	case e.base.Err() != nil:
		tr.To, tr.Reason = store.SessionFailed, "interrupted: the server shut down while this run was in progress"
	case deadline:
		tr.To, tr.Reason = store.SessionTimeout, fmt.Sprintf("the run exceeded its timeout of %d seconds", t.TimeoutSeconds)
	case err != nil:
		tr.To, tr.Reason = store.SessionFailed, err.Error()
	case tr.To == "":
		tr.To = store.SessionCompleted
	case !store.Terminal(tr.To):
		tr.To, tr.Reason = store.SessionFailed, "executor returned the non-final status "+out.Status
	}
	if tr.To == store.SessionFailed && (errors.Is(err, ErrNoLLM) || errors.Is(out.Cause, ErrNoLLM)) {
		e.holdWebhookRuns(t.OrgID, run.SessionID)
	}
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(e.base), 10*time.Second)
	if err := e.db.FinishTaskRun(wctx, run.SessionID, t.ID, tr); err != nil {
		e.log.Error("task run outcome not saved", "session_id", run.SessionID, "err", err)
	}
	wcancel()
	if out.Saved != nil {
		out.Saved(tr.To, tr.Reason)
	}
	e.log.Info("task run ended", "task_id", t.ID, "session_id", run.SessionID, "status", tr.To, "reason", tr.Reason)
	e.freeSlots(t.ID, t.OrgID)
}

// freeSlots releases an ended run's slots and starts what waits (queued
// runs, runs over the org limit), unless a Dispatch that began after this
// release did already.
func (e *Tasks) freeSlots(taskID, orgID string) {
	e.dispatchMu.Lock()
	e.releaseLocked(taskID, orgID)
	e.freed = true
	e.dispatchMu.Unlock()
	if _, err := e.dispatchFreed(); err != nil && e.base.Err() == nil {
		e.log.Error("task dispatch", "err", err)
	}
}

// holdWebhookRuns holds org's webhook runs for store.RunHoldFor: its run
// sessionID failed because no model is configured, and every run until one
// is would fail the same way (see store/webhook_run_hold.go).
func (e *Tasks) holdWebhookRuns(orgID, sessionID string) {
	until := e.db.Now().Add(store.RunHoldFor).UTC() // the clock the store compares with
	e.db.HoldWebhookRuns(orgID, "no LLM configured (run "+sessionID+" failed for it): webhook runs resume once a model is configured, "+
		"or with the first alert after "+until.Format(time.RFC3339), until)
}

// dispatchFreed dispatches if a run released its slots since the last
// Dispatch began.
func (e *Tasks) dispatchFreed() (int, error) {
	if e.base.Err() != nil {
		return 0, nil
	}
	e.dispatchMu.Lock()
	defer e.dispatchMu.Unlock()
	if !e.freed {
		return 0, nil
	}
	return e.dispatchLocked(e.base)
}

// safeExecute turns an executor panic into a failed run instead of a dead process.
func (e *Tasks) safeExecute(ctx context.Context, run *Run) (out Outcome, err error) {
	defer func() {
		if p := recover(); p != nil {
			e.log.Error("task executor panicked", "session_id", run.SessionID, "panic", p)
			out, err = Outcome{}, errors.New("internal error: the executor crashed")
		}
	}()
	return e.exec.Execute(ctx, run)
}
