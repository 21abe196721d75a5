package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/opsagent/opsagent/scheduler"
	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/store"
)

// Execute runs a task run: the scheduler has marked the session running and
// owns its final status, tokens and cost (from the Outcome); this saves the
// transcript and counters and streams events like any other turn. A run that
// stops for an approval waits here, inside its timeout, for the decision.
func (r *Runner) Execute(ctx context.Context, run *scheduler.Run) (scheduler.Outcome, error) {
	info := RunInfo{OrgID: run.OrgID, ProjectID: run.ProjectID, SessionID: run.SessionID, TaskID: run.TaskID,
		UserID: run.CreatedBy, Source: store.SourceTask, TriggerSource: run.TriggerSource}
	// run.Prompt already carries a webhook's event, fenced as data (scheduler.RenderPrompt).
	spec := turnSpec{info: info, history: []llm.Message{{Role: llm.RoleUser, Content: run.Prompt}}, turn: 1,
		maxSteps: run.Budget.MaxSteps, maxCost: run.Budget.MaxCostUSD, agentTyp: run.AgentType}
	if r.draining.Load() {
		return r.suspendUnstarted(ctx, run, spec)
	}
	// A task run is drained like a chat turn (Drain waits for it to reach a
	// checkpoint) and cut with them when the grace is over.
	r.wg.Add(1)
	defer r.wg.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(r.base, cancel)()
	var cp *store.RunCheckpoint
	if run.Resume {
		var err error
		if cp, err = r.claimTaskCheckpoint(ctx, info, &spec); store.IsNotFound(err) {
			return scheduler.Outcome{Suspended: true}, nil // it ended meanwhile: nothing to resume
		} else if err != nil {
			return scheduler.Outcome{}, err
		}
		info = spec.info
	}
	last, err := r.d.DB.LastSessionSeq(ctx, run.SessionID)
	if err != nil {
		return scheduler.Outcome{}, err
	}
	lr := &liveRun{hub: newHub(last + 1), cancel: cancel, ending: make(chan struct{}), finished: make(chan struct{}),
		persisted: make(chan struct{}), decide: make(chan agent.Approval, 1)}
	if !r.register(run.SessionID, lr) {
		return scheduler.Outcome{}, errors.New("the session already has a run in progress")
	}
	go func() {
		defer close(lr.persisted)
		r.persist(run.SessionID, lr.hub)
	}()
	lr.end = func() { r.settleTurn(run.SessionID, lr, nil) }
	// A run that returns its outcome hands the end over to the outcome's
	// Saved (taskOutcome): done is published after the scheduler saved
	// the final status. Any other return (a panic, a suspension) ends here.
	handedOver := false
	defer func() {
		if !handedOver {
			lr.end()
		}
	}()
	spec.durable = &durableTurn{r: r, lr: lr}
	var total turnResult
	if st := spec.resume; st != nil {
		total.usage, total.cost, total.steps = st.Before.Usage, st.Before.Cost, st.Before.Steps
		if cp.Resumes > r.d.ResumeLimit {
			handedOver = true
			return r.taskOutcome(ctx, lr, info.SessionID, info.TriggerSource, r.stopTaskResumed(lr, st, cp.Resumes))
		}
		r.log.Info("agent: resuming an interrupted task run", "session_id", info.SessionID, "from_step", st.Steps,
			"resumes", cp.Resumes, "call_interrupted", st.Started != nil)
	}
	for {
		var w taskWait
		resumedWait := spec.resume != nil && spec.resume.Wait != nil
		if resumedWait {
			st := spec.resume
			// It was waiting for a decision when the server stopped: it
			// waits again, in the same stream, or goes on at once if the
			// decision was taken meanwhile.
			w = *st.Wait
			r.publishStart(spec, lr.hub)
		} else {
			res, done := r.taskTurn(ctx, lr, spec, &total)
			if done != nil {
				if done.suspended {
					close(lr.ending)
					return scheduler.Outcome{Suspended: true}, nil // its checkpoint stands; the run stays running
				}
				handedOver = true
				return r.taskOutcome(ctx, lr, info.SessionID, info.TriggerSource, res)
			}
			w = taskWait{ApprovalID: r.requestApproval(context.WithoutCancel(ctx), info, res.pending), Pending: *res.pending,
				Model: res.model, Summary: res.summary}
			r.publishApproval(lr.hub, res.pending, w.ApprovalID)
			spec.history = res.messages
			r.saveTaskWait(lr, spec, total, w)
		}
		d, err := r.awaitTaskDecision(ctx, lr, info, resumedWait, w)
		if err != nil {
			if errors.Is(err, errDrained) {
				// The wait survives the restart: its checkpoint stands
				// (saveTaskWait), the approval stays pending, and the
				// resumed run waits again.
				close(lr.ending)
				return scheduler.Outcome{Suspended: true}, nil
			}
			res := turnResult{status: agent.StatusCancelled, model: w.Model, summary: w.Summary, usage: total.usage,
				cost: total.cost, steps: total.steps, messages: spec.history}
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				res.status = agent.StatusTimeout
			}
			handedOver = true
			return r.taskOutcome(ctx, lr, info.SessionID, info.TriggerSource, res)
		}
		spec.approval, spec.turn, spec.resume = &d, spec.turn+1, nil
	}
}

// taskEnd says why a task turn ended the run rather than stopped for a
// decision: suspended (cut by a shutdown at a checkpoint) or finished.
type taskEnd struct{ suspended bool }

// taskTurn runs one turn of a task run and saves its transcript and
// counters, adding its totals to total; done is nil when the turn stopped
// for a decision (res.pending).
func (r *Runner) taskTurn(ctx context.Context, lr *liveRun, spec turnSpec, total *turnResult) (turnResult, *taskEnd) {
	spec.before = taskTotals{Usage: total.usage, Cost: total.cost, Steps: total.steps}
	res := r.runTurn(ctx, spec, lr.hub)
	res.toolCalls = int(spec.durable.calls.Load()) // the turn's, before an interruption too
	if r.interrupted(lr, res) {
		return res, &taskEnd{suspended: true}
	}
	turnSteps := res.steps
	total.usage = total.usage.Add(res.usage)
	total.cost += res.cost
	total.steps += res.steps
	res.usage, res.cost, res.steps = total.usage, total.cost, total.steps
	msgs, pending := encodeTranscript(res.messages, res.pending)
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	_, err := r.d.DB.EndTurn(wctx, spec.info.SessionID, store.TurnEnd{CountersOnly: true, WaitingApproval: res.pending != nil,
		Steps: turnSteps, ToolCalls: res.toolCalls, Messages: msgs, Pending: pending})
	wcancel()
	if err != nil {
		r.log.Error("agent: task transcript not saved", "session_id", spec.info.SessionID, "err", err)
	}
	if res.status != agent.StatusWaitingApproval || res.pending == nil {
		return res, &taskEnd{}
	}
	return res, nil
}

// taskTotals are a task run's counters from its turns before the current
// one (a run that stopped for a decision goes on in a new turn).
type taskTotals struct {
	Usage llm.Usage `json:"usage"`
	Cost  float64   `json:"cost"`
	Steps int       `json:"steps"`
}

// claimTaskCheckpoint reads a cut task run's checkpoint, counting one more
// resume, and points spec at it: the transcript so far, the turn and its
// limits as they were.
func (r *Runner) claimTaskCheckpoint(ctx context.Context, info RunInfo, spec *turnSpec) (*store.RunCheckpoint, error) {
	cp, err := r.d.DB.ClaimCheckpoint(ctx, info.OrgID, info.SessionID)
	if err != nil {
		return nil, err
	}
	var st checkpointState
	if err := json.Unmarshal([]byte(cp.State), &st); err != nil {
		return nil, fmt.Errorf("the run's checkpoint is unreadable: %w", err)
	}
	var msgs []llm.Message
	if err := json.Unmarshal([]byte(cp.Messages), &msgs); err != nil {
		return nil, fmt.Errorf("the run's checkpoint transcript is unreadable: %w", err)
	}
	st.Resumes = cp.Resumes
	st.Info.OrgID, st.Info.ProjectID, st.Info.SessionID = cp.OrgID, cp.ProjectID, cp.SessionID
	*spec = turnSpec{info: st.Info, history: msgs, turn: st.Turn, maxSteps: st.MaxSteps, maxCost: st.MaxCost,
		agentTyp: st.AgentType, resume: &st}
	return cp, nil
}

// stopTaskResumed ends a task run cut once too often: failed, with a
// reason that says so and its counters (the scheduler saves them).
func (r *Runner) stopTaskResumed(lr *liveRun, st *checkpointState, resumes int) turnResult {
	reason := fmt.Sprintf("stopped: this run was interrupted and resumed %d times (the limit)", resumes-1)
	lr.hub.publish(string(agent.EventError), agent.ErrorEvent{Code: "resume_limit", Message: reason}, r.d.Now())
	r.log.Warn("agent: interrupted task run stopped at the resume limit", "session_id", st.Info.SessionID, "resumes", resumes-1)
	return turnResult{status: agent.StatusFailed, reason: reason, usage: st.Before.Usage.Add(st.Usage),
		cost: st.Before.Cost + st.Cost, steps: st.Before.Steps + st.Steps, toolCalls: st.ToolCalls}
}

// suspendUnstarted: a run dispatched while the server drains is not
// started; its first checkpoint (its prompt) is written so that it starts
// after the restart, and a resume it was to make waits for the restart.
func (r *Runner) suspendUnstarted(ctx context.Context, run *scheduler.Run, spec turnSpec) (scheduler.Outcome, error) {
	if run.Resume {
		return scheduler.Outcome{Suspended: true}, nil
	}
	msgs := make([]string, len(spec.history))
	for i := range spec.history {
		msgs[i] = marshalNoEscape(spec.history[i])
	}
	b, _ := json.Marshal(checkpointState{Info: spec.info, AgentType: spec.agentTyp, Turn: spec.turn, MaxSteps: spec.maxSteps, MaxCost: spec.maxCost})
	if err := r.d.DB.SaveCheckpoint(context.WithoutCancel(ctx), run.SessionID, nil, store.CheckpointWrite{State: string(b), Messages: msgs}); err != nil {
		return scheduler.Outcome{}, err
	}
	return scheduler.Outcome{Suspended: true}, nil
}

// taskOutcome turns a task turn's result into the scheduler's Outcome,
// whose Saved publishes done with the status the scheduler saved and then
// ends the run's stream: a client that follows the run and reads the
// session after done sees it ended (the scheduler owns the final status).
func (r *Runner) taskOutcome(ctx context.Context, lr *liveRun, sessionID, trigger string, res turnResult) (scheduler.Outcome, error) {
	status := sessionStatus(res.status)
	lr.mu.Lock()
	if lr.cancelledBy != "" && res.status == agent.StatusCancelled {
		res.reason = "cancelled by " + lr.cancelledBy
	}
	lr.mu.Unlock()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		status = store.SessionTimeout
	}
	// The events so far are stored before the scheduler saves the status:
	// a reader of a finished run's events finds them all.
	lr.hub.waitStored(30 * time.Second)
	close(lr.ending)               // from here a next turn waits for this one to settle
	r.report(trigger, status, res) // once per run: res holds the totals of every turn
	out := scheduler.Outcome{Status: status, Reason: res.reason, Summary: res.summary, Model: res.model,
		TokensIn: int64(res.usage.InputTokens), TokensOut: int64(res.usage.OutputTokens), Cost: res.cost, Cause: res.cause}
	if status == store.SessionFailed && res.reason == "" {
		out.Reason = fmt.Sprintf("the run failed (%s)", res.status)
	}
	var once sync.Once
	out.Saved = func(saved, reason string) {
		once.Do(func() {
			if saved != status || reason != out.Reason {
				// The scheduler overrode the outcome (timeout, shutdown):
				// done says what was saved.
				res.reason = reason
			}
			r.settleTurn(sessionID, lr, func(next int64) []Event {
				final := r.finalEvents(next, res, saved, "", nil)
				r.storeFinal(sessionID, final)
				return final
			})
		})
	}
	return out, nil
}
