package runner

import (
	"context"
	"time"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/store"
)

// On a cluster a decision may reach a server other than the one whose task
// run waits for it. That server leaves it in the database (Resume finds the
// run held elsewhere), and the waiting run reads it from there.

// decisionPoll is how often a waiting task run on a cluster looks for its decision.
const decisionPoll = time.Second

// remoteExpiredReason is what the run is told of an approval that expired
// undecided (the deciding server's own wording is not in the database).
const remoteExpiredReason = "not approved in time: the approval expired undecided, so the call did not run"

// awaitDecision waits for the decision on a task run's pending call: handed
// over by Resume on this server, or, on a cluster, recorded in the database
// by another. The error is ctx's (cancelled, or the run's time is up).
func (r *Runner) awaitDecision(ctx context.Context, lr *liveRun, info RunInfo, approvalID string, p *agent.Pending) (agent.Approval, error) {
	var poll <-chan time.Time
	if r.d.DB.Shared() {
		t := time.NewTicker(decisionPoll)
		defer t.Stop()
		poll = t.C
	}
	for {
		select {
		case d := <-lr.decide:
			if p == nil || d.CallID == p.Call.ID {
				return d, nil
			}
			// A decision on an earlier call, already taken from the database.
		case <-poll:
			if d, ok := r.storedDecision(ctx, info, approvalID, p); ok {
				return d, nil
			}
		case <-r.drainStarted:
			return agent.Approval{}, errDrained
		case <-ctx.Done():
			return agent.Approval{}, ctx.Err()
		}
	}
}

// storedDecision returns the decision recorded on approval id, if any.
func (r *Runner) storedDecision(ctx context.Context, info RunInfo, id string, p *agent.Pending) (agent.Approval, bool) {
	if id == "" || p == nil {
		return agent.Approval{}, false
	}
	a, err := r.d.DB.FindApproval(ctx, info.OrgID, info.ProjectID, id)
	if err != nil || a.Status == store.ApprovalPending {
		return agent.Approval{}, false
	}
	d := agent.Approval{CallID: p.Call.ID, Approved: a.Status == store.ApprovalApproved, Reason: a.Comment}
	if a.Status == store.ApprovalExpired {
		d.Reason = remoteExpiredReason
	}
	return d, true
}

// heldElsewhere: the session's task run waits on another server, which
// will read the decision from the database; a chat turn still saving its
// last events elsewhere is waited for (as Resume waits for a local one).
func (r *Runner) heldElsewhere(ctx context.Context, info RunInfo) (bool, error) {
	held, err := r.d.DB.RunHeldElsewhere(ctx, info.SessionID)
	if err != nil || !held {
		return false, err
	}
	sess, err := r.d.DB.FindAgentSession(ctx, info.OrgID, info.SessionID)
	if err != nil {
		return false, err
	}
	if sess.TaskID != "" {
		return true, nil
	}
	for end := time.Now().Add(10 * time.Second); held && time.Now().Before(end); {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if held, err = r.d.DB.RunHeldElsewhere(ctx, info.SessionID); err != nil {
			return false, err
		}
	}
	return false, nil
}
