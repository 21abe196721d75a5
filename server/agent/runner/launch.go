package runner

import (
	"context"
	"time"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/store"
)

// Launch runs the first turn of a chat session just created (and marked
// running) with prompt, in the background: the caller may go away, the turn
// goes on. Its events are followable (Subscribe) as soon as Launch returns.
func (r *Runner) Launch(info RunInfo, prompt, agentType string) error {
	spec := turnSpec{info: info, history: []llm.Message{{Role: llm.RoleUser, Content: prompt}}, turn: 1,
		maxSteps: chatMaxSteps, agentTyp: agentType}
	return r.launch(spec, 1, TurnTimeout)
}

// launch runs a chat, resume or approval turn of a session already marked
// running, in the background under the runner's context. The turn's hub is
// registered before launch returns, so a viewer can attach at once.
func (r *Runner) launch(spec turnSpec, firstSeq int64, timeout time.Duration) error {
	if r.draining.Load() {
		return ErrDraining
	}
	ctx, cancel := context.WithTimeout(r.base, timeout)
	lr := &liveRun{hub: newHub(firstSeq), cancel: cancel, ending: make(chan struct{}), finished: make(chan struct{}),
		persisted: make(chan struct{})}
	if !r.register(spec.info.SessionID, lr) {
		cancel()
		return ErrBusy
	}
	spec.durable = &durableTurn{r: r, lr: lr}
	go func() {
		defer close(lr.persisted)
		r.persist(spec.info.SessionID, lr.hub)
	}()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer cancel()
		started := time.Now()
		res := r.runTurn(ctx, spec, lr.hub)
		if spec.resume != nil {
			res.toolCalls = int(spec.durable.calls.Load()) // the turn's, before the interruption too
		}
		r.save(ctx, spec, lr, res, time.Since(started))
	}()
	return nil
}

// save writes a chat turn's outcome with its last events, then settles it.
// A turn stopped by a shutdown is not ended: its checkpoint stays for the
// resume, and its session stays running.
func (r *Runner) save(ctx context.Context, spec turnSpec, lr *liveRun, res turnResult, took time.Duration) {
	close(lr.ending)
	if r.interrupted(lr, res) {
		r.settleTurn(spec.info.SessionID, lr, nil)
		r.log.Info("agent turn interrupted by the shutdown; it resumes from its last checkpoint", "session_id", spec.info.SessionID, "steps", res.steps)
		return
	}
	status := sessionStatus(res.status)
	lr.mu.Lock()
	by := lr.cancelledBy
	lr.mu.Unlock()
	switch {
	case by != "" && res.status == agent.StatusCancelled:
		res.reason = "cancelled by " + by
	case res.status == agent.StatusTimeout:
		res.reason = "the turn exceeded its time limit of " + TurnTimeout.String()
	}
	approvalID := ""
	if res.status == agent.StatusWaitingApproval {
		approvalID = r.requestApproval(context.WithoutCancel(ctx), spec.info, res.pending)
	}
	msgs, pending := encodeTranscript(res.messages, res.pending)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	r.settleTurn(spec.info.SessionID, lr, func(next int64) []Event {
		var final []Event
		_, err := r.d.DB.EndTurn(wctx, spec.info.SessionID, store.TurnEnd{Status: status, WaitingApproval: res.pending != nil,
			Reason: res.reason, Summary: res.summary, Model: res.model, TokensIn: int64(res.usage.InputTokens),
			TokensOut: int64(res.usage.OutputTokens), Cost: res.cost, Duration: took, Steps: res.steps,
			ToolCalls: res.toolCalls, Messages: msgs, Pending: pending, OrgID: spec.info.OrgID, ProjectID: spec.info.ProjectID,
			Final: func(s *store.AgentSession) []store.SessionEvent {
				status = s.Status
				final = r.finalEvents(next, res, s.Status, approvalID, s)
				return storeEvents(final)
			}})
		if err != nil {
			r.log.Error("agent: turn outcome not saved", "session_id", spec.info.SessionID, "err", err)
			final = r.finalEvents(next, res, status, approvalID, nil)
		}
		return final
	})
	r.report(spec.info.TriggerSource, status, res)
	r.log.Info("agent turn ended", "session_id", spec.info.SessionID, "status", status, "steps", res.steps, "cost", res.cost)
}

// Cancel cancels a session's turn in progress, noting who did, and waits
// (bounded) for it to be saved; false when none is live.
func (r *Runner) Cancel(ctx context.Context, sessionID, by string) bool {
	lr := r.liveRun(sessionID)
	if lr == nil {
		return false
	}
	lr.mu.Lock()
	lr.cancelledBy = by
	lr.mu.Unlock()
	lr.cancel()
	select {
	case <-lr.finished:
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
	}
	return true
}

// Continue starts the next turn of a finished session with a new user
// prompt (chat or resume): history from its transcript. A replayed
// idempotency key returns the turn it started (Replayed) and runs nothing.
func (r *Runner) Continue(ctx context.Context, info RunInfo, prompt, idemKey string) (*store.Turn, error) {
	if r.draining.Load() {
		return nil, ErrDraining
	}
	r.settle(ctx, info.SessionID)
	if err := r.settleElsewhere(ctx, info); err != nil {
		return nil, err
	}
	t, err := r.d.DB.BeginTurn(ctx, info.OrgID, info.ProjectID, info.SessionID, idemKey)
	if err != nil || t.Replayed {
		return t, err
	}
	tr, err := r.d.DB.FindTranscript(ctx, info.OrgID, info.SessionID)
	if err == nil {
		var msgs []llm.Message
		if msgs, _, err = DecodeTranscript(tr); err == nil {
			sess := t.Session
			info.Source, info.TriggerSource, info.TaskID = sess.Source, sess.TriggerSource, sess.TaskID
			spec := turnSpec{info: info, history: append(msgs, llm.Message{Role: llm.RoleUser, Content: prompt}),
				turn: t.Turn, maxSteps: chatMaxSteps, agentTyp: sess.AgentType}
			if err = r.launch(spec, t.FirstSeq, TurnTimeout); err == nil {
				return t, nil
			}
		}
	}
	// The turn was begun but cannot run: end it failed so the session is not stuck running.
	r.log.Error("agent: turn could not start", "session_id", info.SessionID, "err", err)
	_, _ = r.d.DB.EndTurn(context.WithoutCancel(ctx), info.SessionID, store.TurnEnd{Status: store.SessionFailed,
		Reason: "internal error: the turn could not start", Messages: "[]"})
	return nil, err
}

// Resume continues a session that waited for a decision on a tool call. A
// task run blocked in Execute gets the decision directly; a chat session is
// continued in the background.
func (r *Runner) Resume(ctx context.Context, info RunInfo, d agent.Approval) error {
	if r.draining.Load() {
		return ErrDraining // the decision is recorded: ResumeInterrupted honours it after the restart
	}
	if r.liveRun(info.SessionID) == nil {
		if held, err := r.heldElsewhere(ctx, info); err != nil || held {
			return err // a task run waiting on another server takes the decision from the database
		}
	}
	if lr := r.liveRun(info.SessionID); lr != nil && lr.decide != nil {
		select {
		case lr.decide <- d:
			return nil
		default:
			return ErrBusy
		}
	} else if lr != nil {
		// The chat turn that stopped for this approval records the approval
		// before its transcript and wait flag, and stays live while it writes
		// its last events: a quick decision must wait for it to end, or it
		// finds the session not yet waiting, or busy.
		select {
		case <-lr.finished:
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Second):
		}
	}
	sess, err := r.d.DB.FindAgentSession(ctx, info.OrgID, info.SessionID)
	if err != nil {
		return err
	}
	if sess.TaskID != "" && sess.Status == store.SessionRunning && sess.WaitingApproval && r.liveRun(info.SessionID) == nil {
		// A task run whose wait a restart cut: the scheduler resumes it,
		// and it reads the decision from the database (task_wait.go). It
		// is not continued as a chat turn: one run, one result.
		return nil
	}
	tr, err := r.d.DB.FindTranscript(ctx, info.OrgID, info.SessionID)
	if err != nil {
		return err
	}
	msgs, pending, err := DecodeTranscript(tr)
	if err != nil {
		return err
	}
	if pending == nil || pending.Call.ID != d.CallID {
		return &store.Error{Code: store.EConflict, Message: "the session is not waiting for a decision on this call", Reason: "not_waiting"}
	}
	ok, err := r.d.DB.ClaimApprovalWait(ctx, info.OrgID, info.SessionID)
	if err != nil {
		return err
	}
	if !ok {
		return &store.Error{Code: store.EConflict, Message: "the session is no longer waiting for this decision", Reason: "not_waiting"}
	}
	last, err := r.d.DB.LastSessionSeq(ctx, info.SessionID)
	if err != nil {
		return err
	}
	full, err := r.d.DB.FindProjectSession(ctx, info.OrgID, sess.ProjectID, info.SessionID)
	if err != nil {
		return err
	}
	info.ProjectID, info.Source, info.TriggerSource, info.TaskID = sess.ProjectID, sess.Source, sess.TriggerSource, sess.TaskID
	spec := turnSpec{info: info, history: msgs, approval: &d, turn: full.Turns, maxSteps: chatMaxSteps, agentTyp: sess.AgentType}
	if err = r.launch(spec, last+1, TurnTimeout); err != nil {
		// Claimed but it cannot run: end the session failed rather than
		// leave it running with nobody to continue it.
		r.log.Error("agent: approved session could not continue", "session_id", info.SessionID, "err", err)
		_, _ = r.d.DB.EndTurn(context.WithoutCancel(ctx), info.SessionID, store.TurnEnd{Status: store.SessionFailed,
			Reason: "internal error: the session could not continue after the decision", Messages: tr.Messages, Pending: tr.Pending})
	}
	return err
}
