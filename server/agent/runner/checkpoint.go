package runner

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/store"
)

// Chat turns and task runs are checkpointed at every step boundary (issue 34): the
// transcript so far and the turn's state below, in the same transaction as
// the step's events (persist writes both). A turn cut by a shutdown, a
// kill -9 or a dead node resumes from there (resume.go).

// EventResumed is published first by a resumed turn, where a new turn
// publishes session: the same turn goes on, in the same stream.
const EventResumed = "run.resumed"

// RunResumed is the payload of run.resumed.
type RunResumed struct {
	SessionID string `json:"session_id"`
	Turn      int    `json:"turn"`
	Resumes   int    `json:"resumes" doc:"how many times this turn was resumed, this one included"`
	FromStep  int    `json:"from_step" doc:"model calls the turn had completed; the next one is issued again"`
	// Interrupted names the change-capable call that had started without a
	// recorded result: it is not run again, the model is told to check.
	Interrupted  string    `json:"interrupted_call,omitempty"`
	Usage        llm.Usage `json:"usage" doc:"this turn's usage before the interruption, counted in its totals"`
	Cost         float64   `json:"cost" doc:"this turn's cost before the interruption, USD"`
	FirstEventID int64     `json:"first_event_id"`
}

// checkpointState is what a resumed turn needs besides its transcript.
type checkpointState struct {
	Info      RunInfo         `json:"info"`
	AgentType string          `json:"agent_type"`
	Turn      int             `json:"turn"`
	MaxSteps  int             `json:"max_steps"`
	Steps     int             `json:"steps"`
	Usage     llm.Usage       `json:"usage"`
	Cost      float64         `json:"cost"`
	ToolCalls int             `json:"tool_calls"`
	Started   *agent.Call     `json:"started,omitempty"`
	Approval  *agent.Approval `json:"approval,omitempty"` // a decision not yet applied
	Resumes   int             `json:"-"`                  // from the row (store.RunCheckpoint)
	// A task run's cost cap, and its counters from turns before this one.
	MaxCost float64    `json:"max_cost,omitempty"`
	Before  taskTotals `json:"before"`
	// Wait: a task run waiting for a decision (task_wait.go); it resumes
	// by waiting again, not by calling the model.
	Wait *taskWait `json:"wait,omitempty"`
}

// durableTurn checkpoints one chat turn.
type durableTurn struct {
	r     *Runner
	lr    *liveRun
	state checkpointState
	calls atomic.Int64 // tool calls announced, this turn
	// written is each transcript message's JSON as the last checkpoint
	// stored it: the next one writes from the first that differs (the
	// messages added since, or what the loop compacted).
	written []string
}

// cpRequest is a checkpoint waiting for persist to write it with the events
// published before it.
type cpRequest struct {
	cp   store.CheckpointWrite
	done chan error
}

// checkpoint hands persist a checkpoint and waits until it is written.
func (h *hub) checkpoint(cp store.CheckpointWrite) error {
	req := &cpRequest{cp: cp, done: make(chan error, 1)}
	h.mu.Lock()
	h.cp = req
	close(h.wake)
	h.wake = make(chan struct{})
	h.mu.Unlock()
	select {
	case err := <-req.done:
		return err
	case <-time.After(30 * time.Second):
		return context.DeadlineExceeded
	}
}

// takeCheckpoint returns the checkpoint waiting to be written, if any.
func (h *hub) takeCheckpoint() *cpRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	cp := h.cp
	h.cp = nil
	return cp
}

// durable prepares a turn's checkpoints (a chat turn's, a task run's): it writes the first one (the
// turn's history), sets cfg's hook and resume point, and returns emit
// wrapped so that a turn stopped by a shutdown does not report itself
// cancelled (it is not: it resumes).
func (r *Runner) durable(spec turnSpec, cfg *agent.Config, emit func(agent.Event)) func(agent.Event) {
	d := spec.durable
	if d == nil {
		return emit
	}
	d.written = nil // a new turn (its last one's rows went with its end): its first checkpoint writes them all
	if st := spec.resume; st != nil {
		d.state = *st
		cfg.From = &agent.ResumeFrom{Steps: st.Steps, Usage: st.Usage, Cost: st.Cost, Approval: st.Approval}
		if st.Started != nil {
			cfg.From.Started = st.Started.ID
		}
	} else {
		d.state = checkpointState{Info: spec.info, AgentType: spec.agentTyp, Turn: spec.turn, MaxSteps: spec.maxSteps, Approval: spec.approval,
			MaxCost: spec.maxCost, Before: spec.before}
		d.write(spec.history, d.state)
	}
	d.calls.Store(int64(d.state.ToolCalls))
	cfg.Checkpoint = d.hook
	return func(e agent.Event) {
		if d.cut() {
			return // past the checkpoint the resumed turn goes on from: not what happened
		}
		if e.Type == agent.EventToolCall {
			d.calls.Add(1)
		}
		emit(e)
	}
}

// cut: a shutdown stopped the turn at a checkpoint (drained) or cut it when
// the grace ran out; what the loop does after that (a call's "context
// canceled", the run's "cancelled") is neither stored nor shown, and the
// last checkpoint stands.
func (d *durableTurn) cut() bool { return d.lr.drained.Load() || d.r.base.Err() != nil }

// hook is agent.Config.Checkpoint. On a draining server it ends the turn
// once the checkpoint is written (a change-capable call about to start is
// then not started: the resumed turn asks for it again).
func (d *durableTurn) hook(_ context.Context, cp agent.Checkpoint) {
	if d.cut() {
		return
	}
	draining := d.r.draining.Load()
	st := d.state
	st.Steps, st.Usage, st.Cost, st.Started = cp.Steps, cp.Usage, cp.Cost, cp.Started
	st.ToolCalls = int(d.calls.Load())
	st.Approval = nil // the loop has acted on it: the call started, or was answered
	if draining {
		st.Started = nil
	}
	d.write(cp.Transcript, st)
	if draining {
		d.lr.drained.Store(true)
		d.lr.cancel()
	}
}

// write stores a checkpoint: st and the messages changed since the last
// one (all of them at the turn's first).
func (d *durableTurn) write(msgs []llm.Message, st checkpointState) {
	enc := make([]string, len(msgs))
	for i := range msgs {
		enc[i] = marshalNoEscape(msgs[i])
	}
	from := 0
	for from < len(enc) && from < len(d.written) && enc[from] == d.written[from] {
		from++
	}
	b, _ := json.Marshal(st)
	if err := d.lr.hub.checkpoint(store.CheckpointWrite{State: string(b), From: from, Messages: enc[from:]}); err != nil {
		d.r.log.Error("agent: checkpoint not saved", "session_id", st.Info.SessionID, "err", err)
		d.written = nil // not known to be stored: the next one writes them all
		return
	}
	d.written = enc
}

// persistBatch writes a batch of events, with the checkpoint waiting, if
// any, in the same transaction.
func (r *Runner) persistBatch(sessionID string, batch []store.SessionEvent, cp *cpRequest) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if cp == nil {
		return r.d.DB.AppendSessionEvents(ctx, sessionID, batch)
	}
	err := r.d.DB.SaveCheckpoint(ctx, sessionID, batch, cp.cp)
	cp.done <- err
	return err
}

// interrupted: a chat turn ended by a shutdown (drained at a checkpoint, or
// cut when the grace ran out). Its session stays running with its
// checkpoint, to be resumed.
func (r *Runner) interrupted(lr *liveRun, res turnResult) bool {
	if res.status == agent.StatusCompleted || res.status == agent.StatusWaitingApproval {
		return false // it ended at that boundary (a final answer, an approval): nothing to resume
	}
	return lr.drained.Load() || r.base.Err() != nil
}

// publishStart publishes a turn's first event: session for a new turn,
// run.resumed for one going on after an interruption.
func (r *Runner) publishStart(spec turnSpec, hub *hub) {
	st := spec.resume
	if st == nil {
		hub.publish(EventSession, SessionStarted{SessionID: spec.info.SessionID, Turn: spec.turn, Status: store.SessionRunning,
			Source: spec.info.Source, TriggerSource: spec.info.TriggerSource, FirstEventID: hub.first}, r.d.Now())
		return
	}
	ev := RunResumed{SessionID: spec.info.SessionID, Turn: spec.turn, Resumes: st.Resumes, FromStep: st.Steps,
		Usage: st.Usage, Cost: st.Cost, FirstEventID: hub.first}
	if st.Started != nil {
		ev.Interrupted = st.Started.ID
	}
	hub.publish(EventResumed, ev, r.d.Now())
}

// Defaults of Deps.ShutdownGrace and Deps.ResumeLimit.
const (
	DefaultShutdownGrace = 20 * time.Second
	DefaultResumeLimit   = 3
)

// ErrDraining refuses a turn while the server shuts down (503 with
// Retry-After): a client sends it again to the restarted server, or to
// another server of a cluster.
var ErrDraining = &store.Error{Code: store.EConflict, Message: "the server is shutting down; send this again in a few seconds", Reason: "shutting_down"}
