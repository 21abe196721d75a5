package runner

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/store"
)

// ResumeInterrupted resumes the chat turns a stop, a crash or a dead server
// cut, from their checkpoints: on one server at start, on a cluster also
// from a periodic job, for turns whose server's run lock is gone (its
// connection died with it). It also continues sessions whose approval was
// decided while no server could act on it. It returns how many turns it
// resumed or stopped.
func (r *Runner) ResumeInterrupted(ctx context.Context) (int, error) {
	if r.draining.Load() {
		return 0, nil
	}
	cps, err := r.d.DB.CheckpointedRuns(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range cps {
		if r.Live(c.SessionID) {
			continue
		}
		release, ok, err := r.d.DB.TryHoldRun(ctx, c.SessionID)
		if err != nil {
			return n, err
		}
		if !ok {
			continue // live on another server
		}
		err = r.resumeRun(ctx, c)
		release()
		if err != nil {
			r.log.Error("agent: interrupted turn not resumed", "session_id", c.SessionID, "err", err)
			continue
		}
		n++
	}
	r.resumeDecided(ctx)
	return n, nil
}

// resumeRun claims a cut turn's checkpoint and launches the turn from it,
// or stops it when it was resumed ResumeLimit times already.
func (r *Runner) resumeRun(ctx context.Context, c store.RunCheckpoint) error {
	if r.Live(c.SessionID) {
		return nil
	}
	cp, err := r.d.DB.ClaimCheckpoint(ctx, c.OrgID, c.SessionID)
	if store.IsNotFound(err) {
		return nil // it ended meanwhile
	}
	if err != nil {
		return err
	}
	var st checkpointState
	if err := json.Unmarshal([]byte(cp.State), &st); err != nil {
		return fmt.Errorf("checkpoint unreadable: %w", err)
	}
	var msgs []llm.Message
	if err := json.Unmarshal([]byte(cp.Messages), &msgs); err != nil {
		return fmt.Errorf("checkpoint transcript unreadable: %w", err)
	}
	st.Resumes = cp.Resumes
	st.Info.OrgID, st.Info.ProjectID, st.Info.SessionID = cp.OrgID, cp.ProjectID, cp.SessionID
	last, err := r.d.DB.LastSessionSeq(ctx, c.SessionID)
	if err != nil {
		return err
	}
	if cp.Resumes > r.d.ResumeLimit {
		return r.stopResumed(ctx, st, cp, last+1)
	}
	r.log.Info("agent: resuming an interrupted turn", "session_id", c.SessionID, "from_step", st.Steps, "resumes", cp.Resumes,
		"call_interrupted", st.Started != nil)
	spec := turnSpec{info: st.Info, history: msgs, turn: st.Turn, maxSteps: st.MaxSteps, agentTyp: st.AgentType, resume: &st}
	if err := r.launch(spec, last+1, TurnTimeout); err != nil {
		return err
	}
	if r.d.Resumed != nil {
		r.d.Resumed(st.Info, last+1)
	}
	return nil
}

// stopResumed ends a turn interrupted once too often: failed, with a reason
// that says so, its counters and a done event for whoever follows it.
func (r *Runner) stopResumed(ctx context.Context, st checkpointState, cp *store.RunCheckpoint, next int64) error {
	reason := fmt.Sprintf("stopped: this turn was interrupted and resumed %d times (the limit); "+
		"send a message to continue the session", cp.Resumes-1)
	res := turnResult{status: agent.StatusFailed, reason: reason, usage: st.Usage, cost: st.Cost, steps: st.Steps}
	_, err := r.d.DB.EndTurn(ctx, cp.SessionID, store.TurnEnd{Status: store.SessionFailed, Reason: reason,
		TokensIn: int64(st.Usage.InputTokens), TokensOut: int64(st.Usage.OutputTokens), Cost: st.Cost, Steps: st.Steps,
		ToolCalls: st.ToolCalls, Messages: cp.Messages, OrgID: cp.OrgID, ProjectID: cp.ProjectID,
		Final: func(s *store.AgentSession) []store.SessionEvent {
			errEv := Event{Seq: next, Type: string(agent.EventError), At: r.d.Now()}
			errEv.Data, _ = json.Marshal(agent.ErrorEvent{Code: "resume_limit", Message: reason})
			return storeEvents(append([]Event{errEv}, r.finalEvents(next+1, res, s.Status, "", s)...))
		}})
	if err == nil {
		r.log.Warn("agent: interrupted turn stopped at the resume limit", "session_id", cp.SessionID, "resumes", cp.Resumes-1)
	}
	return err
}

// resumeDecided continues sessions waiting for a decision that was taken
// while no server could continue them (the server was stopping, or died
// between recording the decision and resuming): honoured once, since
// Resume claims the wait.
func (r *Runner) resumeDecided(ctx context.Context) {
	waits, err := r.d.DB.DecidedWaits(ctx)
	if err != nil {
		r.log.Error("agent: decided approvals not read", "err", err)
		return
	}
	for _, w := range waits {
		if r.Live(w.SessionID) {
			continue
		}
		d := agent.Approval{CallID: w.CallID, Approved: w.Status == store.ApprovalApproved, Reason: w.Comment}
		if w.Status == store.ApprovalExpired {
			d.Reason = remoteExpiredReason
		}
		info := RunInfo{OrgID: w.OrgID, ProjectID: w.ProjectID, SessionID: w.SessionID, UserID: w.DecidedBy}
		if err := r.Resume(ctx, info, d); err != nil && store.ErrorCode(err) != store.EConflict {
			r.log.Warn("agent: decided session not continued", "session_id", w.SessionID, "err", err)
		}
	}
}
