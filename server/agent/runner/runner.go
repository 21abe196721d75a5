// Package runner runs agent turns in the background, persists their events
// and transcripts, keeps sessions' rows up to date, and lets any number of
// viewers follow a live turn. It is also the task scheduler's Executor.
//
// A run goes on when the browser that started it closes: the HTTP side
// (server) only translates requests into Launch, Continue, Resume, Cancel
// and Subscribe, and writes the Events it gets as server-sent events.
//
// It imports store, scheduler, the agent loop and its LLM clients, the
// knowledge base and the secret keeper; never package server.
package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opsagent/opsagent/scheduler"
	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/knowledge"
	"github.com/opsagent/opsagent/server/secrets"
	"github.com/opsagent/opsagent/server/telemetry"
	"github.com/opsagent/opsagent/store"
)

// Limits of one turn started from chat or resume (task runs carry their own).
const (
	TurnTimeout  = 15 * time.Minute
	chatMaxSteps = agent.DefaultMaxSteps
	// interruptedReason is the reason of a turn cut by a shutdown.
	interruptedReason = "interrupted: the server shut down while this run was in progress"
)

// LLMKeys resolves an org's own LLM credential (*secrets.Keeper does); a
// not-found error means the server's settings apply.
type LLMKeys interface {
	LLMKey(ctx context.Context, orgID string) (*secrets.LLMKey, error)
}

// Deps are what a Runner is built from.
type Deps struct {
	DB        *store.DB
	Knowledge *knowledge.Base // the search_knowledge, remember and recall tools
	Keys      LLMKeys
	// LLM is the server's own provider settings (Provider, BaseURL, APIKey,
	// Model); an org's key from Keys overrides them.
	LLM    llm.Config
	Prices llm.Prices
	Policy Policy // nil: no tools, gate, budget or obligations beyond the runner's own
	Logger *slog.Logger
	Now    func() time.Time // the server's clock (tests move it)
	// Telemetry hears of each ended run and its model usage (nil: nothing).
	Telemetry telemetry.Agent
	// Investigator gathers evidence and keeps findings (investigate.go; nil: none).
	Investigator Investigator
	// ShutdownGrace is how long Stop lets live turns reach their next
	// checkpoint before it cuts them (default DefaultShutdownGrace).
	ShutdownGrace time.Duration
	// ResumeLimit is how many times one turn is resumed after interruptions
	// before it is stopped (default DefaultResumeLimit).
	ResumeLimit int
	// Resumed, when set, hears of every turn resumed after an interruption,
	// with the number of its first event (run.resumed), once it is live: a
	// chat channel's relay, ended with the server that ran the turn,
	// follows it again from there.
	Resumed func(info RunInfo, firstSeq int64)
}

// Runner runs agent turns; build it with New and end it with Stop.
type Runner struct {
	d   Deps
	log *slog.Logger

	base   context.Context // chat turns run under it; cancelled by Stop
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu   sync.Mutex
	live map[string]*liveRun // session id -> its turn in progress

	// draining: the server is stopping; new turns are refused and live ones
	// end at their next checkpoint (resume.go).
	draining atomic.Bool
	// drainStarted is closed by Drain: a task run waiting for a decision
	// stops waiting (errDrained); its checkpointed wait resumes after the
	// restart (task_wait.go).
	drainStarted chan struct{}
	drainOnce    sync.Once
}

// errDrained ends a task run's wait for a decision when the server stops.
var errDrained = errors.New("the server is shutting down")

// liveRun is a turn in progress.
type liveRun struct {
	hub    *hub
	cancel context.CancelFunc
	// ending is closed when the turn starts saving its outcome: a next turn
	// asked for from then on waits for finished instead of answering 409.
	ending   chan struct{}
	finished chan struct{} // closed once the turn is settled (settle.go)
	// persisted is closed when persist has stopped (settle.go).
	persisted chan struct{}
	// drained: a shutdown stopped the turn at a checkpoint, to be resumed.
	drained atomic.Bool
	// end closes a task run's stream and unregisters it (task.go).
	end func()
	// decide receives the decision for a task run blocked on an approval.
	decide chan agent.Approval

	mu          sync.Mutex
	cancelledBy string // set by Cancel before cancel()

	// release gives up the cluster-wide mark that this server runs the
	// session (store.HoldRun), once its last event is saved.
	release func()
}

// New builds a runner over d.
func New(d Deps) *Runner {
	if d.Telemetry == nil {
		d.Telemetry = telemetry.Nop{}
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Now == nil {
		d.Now = func() time.Time { return time.Now().UTC() }
	}
	if d.ShutdownGrace <= 0 {
		d.ShutdownGrace = DefaultShutdownGrace
	}
	if d.ResumeLimit <= 0 {
		d.ResumeLimit = DefaultResumeLimit
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Runner{d: d, log: d.Logger.With("component", "agent"), base: ctx, cancel: cancel, live: map[string]*liveRun{},
		drainStarted: make(chan struct{})}
}

// Recover fails chats a stopped process left running without a checkpoint
// (task runs are the task scheduler's to recover; waits for approval
// survive a restart; checkpointed turns are resumed by ResumeInterrupted
// once the server serves).
func (r *Runner) Recover(ctx context.Context) {
	n, err := r.d.DB.FailOrphanedChats(ctx, "interrupted: the server stopped while this session was running")
	if err != nil {
		r.log.Error("agent: recovering interrupted sessions", "err", err)
	} else if n > 0 {
		r.log.Warn("agent: sessions interrupted by the last stop marked failed", "count", n)
	}
}

// Drain begins the shutdown: new turns are refused (ErrDraining), and live
// chat turns and task runs get ShutdownGrace to reach their next checkpoint and end
// there, saved to be resumed. It returns when none is left or the grace
// is over.
func (r *Runner) Drain() {
	r.draining.Store(true)
	r.drainOnce.Do(func() { close(r.drainStarted) })
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(r.d.ShutdownGrace):
		r.log.Warn("agent: turns still running at the end of the shutdown grace; cutting them at their last checkpoint", "grace", r.d.ShutdownGrace)
	}
}

// Stop drains if Drain was not called, then cuts the turns still running
// (their last checkpoint stands) and waits for them to be saved.
func (r *Runner) Stop() {
	if !r.draining.Load() {
		r.Drain()
	}
	r.cancel()
	r.wg.Wait()
}

// Live reports whether the session has a turn in progress.
func (r *Runner) Live(sessionID string) bool { return r.liveRun(sessionID) != nil }

func (r *Runner) hub(sessionID string) *hub {
	if lr := r.liveRun(sessionID); lr != nil {
		return lr.hub
	}
	return nil
}

func (r *Runner) liveRun(sessionID string) *liveRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live[sessionID]
}

// settle waits for a turn that has saved its outcome but is still writing
// its last events, so the next turn numbers its events after them. A turn
// still running is not waited for: the caller's BeginTurn answers 409.
func (r *Runner) settle(ctx context.Context, sessionID string) {
	if lr := r.liveRun(sessionID); lr != nil && lr.ending != nil {
		select {
		case <-lr.ending:
		default:
			return
		}
		select {
		case <-lr.finished:
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
		}
	}
}

// register makes a turn live; false when the session already has one.
func (r *Runner) register(sessionID string, lr *liveRun) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live[sessionID] != nil {
		return false
	}
	r.live[sessionID] = lr
	lr.release = r.d.DB.HoldRun(context.Background(), sessionID)
	return true
}

func (r *Runner) unregister(sessionID string, lr *liveRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live[sessionID] == lr {
		delete(r.live, sessionID)
	}
	if lr.release != nil {
		lr.release()
	}
}

// provider is the LLM for one run of orgID: the org's own key from the
// vault, else the server's settings. With neither, the error is
// scheduler.ErrNoLLM, which names the OPSAGENT_LLM_* variables.
func (r *Runner) provider(ctx context.Context, orgID string) (llm.Provider, string, error) {
	c, err := r.primaryConfig(ctx, orgID)
	if err != nil {
		return nil, "", err
	}
	return r.withFallbacks(ctx, orgID, c) // models.go
}

// primaryConfig resolves the org's primary model: its own key from the
// vault over the server's settings.
func (r *Runner) primaryConfig(ctx context.Context, orgID string) (llm.Config, error) {
	c := r.d.LLM
	c.Logger = r.log
	if r.d.Keys != nil {
		key, err := r.d.Keys.LLMKey(ctx, orgID)
		switch {
		case err == nil:
			if key.Provider != "" && key.Provider != c.Provider {
				c.Provider, c.BaseURL, c.Model = key.Provider, "", "" // the server's URL and model belong to another API
			}
			if key.BaseURL != "" {
				c.BaseURL = key.BaseURL
			}
			if key.Model != "" {
				c.Model = key.Model
			}
			c.APIKey = key.APIKey
		case !store.IsNotFound(err):
			return llm.Config{}, fmt.Errorf("the organization's LLM key could not be read: %w", err)
		}
	}
	if c.Provider == "" {
		return llm.Config{}, scheduler.ErrNoLLM
	}
	return c, nil
}

// ErrBusy answers a turn for a session that already has one in progress.
var ErrBusy = &store.Error{Code: store.EConflict, Message: "session is running; wait for it to finish or cancel it", Reason: "session_running"}
