package agent

import (
	"context"

	"github.com/opsagent/opsagent/server/agent/llm"
)

// A run can be checkpointed and resumed (issue 34): the caller persists
// a Checkpoint at every step boundary (a model call or a tool call has
// finished), and before a change-capable call starts; after a restart it
// starts the run again with the checkpoint's transcript and ResumeFrom.

// InterruptedOutcome is the result a change-capable call gets when it started
// but the run was cut before its result was recorded: it may or may not have
// taken effect, so it is not run again blindly.
const InterruptedOutcome = "error: interrupted; outcome unknown: check before retrying. " +
	"This call started but the run was interrupted (the server stopped) before its result was recorded, " +
	"so it may or may not have taken effect; it was not run again."

// Checkpoint is a run's state at a step boundary.
type Checkpoint struct {
	// Transcript is the conversation so far (not to be kept past the call:
	// the run goes on appending to it).
	Transcript []llm.Message
	Steps      int // model calls made
	Usage      llm.Usage
	Cost       float64
	// Started is the change-capable call about to run; nil at a boundary.
	// Persisted before the call runs, it tells a resumed run that the call
	// may have taken effect.
	Started *Call
}

// ResumeFrom is where a resumed run starts: the counters of its checkpoint,
// the call that was in flight, and a decision not yet applied.
type ResumeFrom struct {
	Steps    int
	Usage    llm.Usage
	Cost     float64
	Started  string    // id of the change-capable call that started without a result
	Approval *Approval // a human's decision on an open call, honoured once
}

// restore applies cfg.From to a new run.
func (r *run) restore() {
	f := r.cfg.From
	if f == nil {
		return
	}
	r.steps, r.usage, r.cost = f.Steps, f.Usage, f.Cost
	if f.Approval != nil && r.approval == nil {
		r.approval = f.Approval
	}
}

// checkpoint hands the caller the run's state; started is the change-capable
// call about to run, if any. The caller may end the run at this boundary by
// cancelling its context (a draining server does).
func (r *run) checkpoint(ctx context.Context, started *Call) {
	if r.cfg.Checkpoint == nil {
		return
	}
	r.cfg.Checkpoint(ctx, Checkpoint{Transcript: r.msgs, Steps: r.steps, Usage: r.usage, Cost: r.cost, Started: started})
}

// interrupted reports whether c is the change-capable call a resumed run
// found started without a result; it is answered with InterruptedOutcome
// (once: the answer closes it).
func (r *run) interrupted(c llm.ToolCall) bool {
	if f := r.cfg.From; f != nil && f.Started != "" && f.Started == c.ID {
		f.Started = ""
		return true
	}
	return false
}
