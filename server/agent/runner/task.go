package runner

import (
	"context"
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
	last, err := r.d.DB.LastSessionSeq(ctx, run.SessionID)
	if err != nil {
		return scheduler.Outcome{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
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
	// the final status. Any other return (a panic) ends here.
	handedOver := false
	defer func() {
		if !handedOver {
			lr.end()
		}
	}()

	// run.Prompt already carries a webhook's event, fenced as data (scheduler.RenderPrompt).
	spec := turnSpec{info: info, history: []llm.Message{{Role: llm.RoleUser, Content: run.Prompt}}, turn: 1,
		maxSteps: run.Budget.MaxSteps, maxCost: run.Budget.MaxCostUSD, agentTyp: run.AgentType}
	var total turnResult
	for {
		res := r.runTurn(ctx, spec, lr.hub)
		turnSteps := res.steps
		total.usage = total.usage.Add(res.usage)
		total.cost += res.cost
		total.steps += res.steps
		res.usage, res.cost, res.steps = total.usage, total.cost, total.steps
		msgs, pending := encodeTranscript(res.messages, res.pending)
		wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		_, err := r.d.DB.EndTurn(wctx, run.SessionID, store.TurnEnd{CountersOnly: true, WaitingApproval: res.pending != nil,
			Steps: turnSteps, ToolCalls: res.toolCalls, Messages: msgs, Pending: pending})
		wcancel()
		if err != nil {
			r.log.Error("agent: task transcript not saved", "session_id", run.SessionID, "err", err)
		}
		if res.status != agent.StatusWaitingApproval {
			handedOver = true
			return r.taskOutcome(ctx, lr, info.SessionID, info.TriggerSource, res)
		}
		approvalID := r.requestApproval(context.WithoutCancel(ctx), info, res.pending)
		r.publishApproval(lr.hub, res.pending, approvalID)
		d, err := r.awaitDecision(ctx, lr, info, approvalID, res.pending)
		if err != nil {
			res.status = agent.StatusCancelled
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				res.status = agent.StatusTimeout
			}
			res.pending = nil
			handedOver = true
			return r.taskOutcome(ctx, lr, info.SessionID, info.TriggerSource, res)
		}
		spec.history, spec.approval, spec.turn = res.messages, &d, spec.turn+1
	}
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
