package runner

import (
	"context"
	"encoding/json"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/store"
)

// A task run that stops for an approval waits inside its run (Execute). The
// wait is checkpointed when it begins, so that it survives a SIGTERM, a
// kill -9 or a dead node (issue 34): the run stays running and waiting,
// its approval pending; the scheduler resumes it after the restart
// (FindInterruptedRuns), and the resumed run waits again, or goes on at
// once with a decision taken while it was not live. The next turn's first
// checkpoint replaces the wait's, so a decision is applied once.

// taskWait is a task run's wait for a decision, as its checkpoint records it.
type taskWait struct {
	ApprovalID string        `json:"approval_id"`
	Pending    agent.Pending `json:"pending"`
	// The turn's model and summary: the run's outcome if it ends waiting.
	Model   string `json:"model,omitempty"`
	Summary string `json:"summary,omitempty"`
}

// saveTaskWait checkpoints a task run that begins waiting for a decision:
// its transcript (spec.history), its totals so far and the wait, with the
// events published before it (approval.required among them). The session
// stays waiting.
func (r *Runner) saveTaskWait(lr *liveRun, spec turnSpec, total turnResult, w taskWait) {
	st := checkpointState{Info: spec.info, AgentType: spec.agentTyp, Turn: spec.turn, MaxSteps: spec.maxSteps, MaxCost: spec.maxCost,
		Before: taskTotals{Usage: total.usage, Cost: total.cost, Steps: total.steps}, Wait: &w}
	enc := make([]string, len(spec.history))
	for i := range spec.history {
		enc[i] = marshalNoEscape(spec.history[i])
	}
	b, _ := json.Marshal(st)
	if err := lr.hub.checkpoint(store.CheckpointWrite{State: string(b), Messages: enc, Waiting: true}); err != nil {
		// The run still waits here; only a restart during the wait fails it (no checkpoint).
		r.log.Error("agent: task run's wait not checkpointed", "session_id", spec.info.SessionID, "err", err)
	}
}

// awaitTaskDecision waits for the decision on w. A resumed wait first reads
// the database: a decision taken while the run was not live (Resume leaves
// it there for this run) is honoured at once.
func (r *Runner) awaitTaskDecision(ctx context.Context, lr *liveRun, info RunInfo, resumed bool, w taskWait) (agent.Approval, error) {
	if resumed {
		if d, ok := r.storedDecision(ctx, info, w.ApprovalID, &w.Pending); ok {
			return d, nil
		}
	}
	return r.awaitDecision(ctx, lr, info, w.ApprovalID, &w.Pending)
}
