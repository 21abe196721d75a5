package runner

import (
	"context"
	"fmt"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/store"
)

// turnSpec is one turn to run.
type turnSpec struct {
	info     RunInfo
	history  []llm.Message
	approval *agent.Approval // continue after a decision instead of asking the model first
	turn     int
	maxSteps int
	maxCost  float64 // USD for this run; 0 = no cap but the policy budget
	agentTyp string
	durable  *durableTurn     // checkpoints the turn (checkpoint.go)
	resume   *checkpointState // the checkpoint a resumed turn goes on from
	before   taskTotals       // a task run's counters from its earlier turns, kept in its checkpoints
}

// turnResult is what a turn produced, ready to be saved.
type turnResult struct {
	status    agent.Status
	reason    string
	cause     error // what failed the turn, when it failed before the model (scheduler.Outcome.Cause)
	summary   string
	model     string
	provider  string // the provider's name ("openai", "anthropic"), for metrics
	usage     llm.Usage
	cost      float64
	steps     int
	toolCalls int
	messages  []llm.Message
	pending   *agent.Pending
}

// runTurn drives one agent.Run (or Resume) and publishes its events on
// hub. It holds back the agent's done (and approval.required) so the caller
// can save the outcome first: a viewer that sees done reads a saved session.
func (r *Runner) runTurn(ctx context.Context, spec turnSpec, hub *hub) turnResult {
	now := r.d.Now
	r.publishStart(spec, hub)
	provider, model, err := r.provider(ctx, spec.info.OrgID)
	if err != nil {
		msg := err.Error()
		code := string(llm.ClassOf(err))
		if code == "" {
			code = "llm_config"
		}
		hub.publish(string(agent.EventError), agent.ErrorEvent{Code: code, Message: msg}, now())
		return turnResult{status: agent.StatusFailed, reason: msg, cause: err, messages: spec.history}
	}
	cfg := agent.Config{Provider: provider, Model: model, MaxSteps: spec.maxSteps, Prices: r.d.Prices, Logger: r.log}
	r.applyModelSettings(ctx, spec.info.OrgID, model, &cfg) // models.go
	iv := r.beginInvestigation(ctx, &spec, hub)             // investigate.go: evidence before the first model call
	if iv != nil {
		iv.model = model
	}
	cfg.Tools, err = r.toolSet(ctx, spec.info, iv)
	if err == nil {
		var version string
		cfg.System, version = r.framedPrompt(ctx, spec, cfg.Tools, iv) // prompt.go
		r.recordPrompt(ctx, spec, version, iv)
	}
	if err != nil {
		r.log.Error("agent: tool set", "err", err)
		hub.publish(string(agent.EventError), agent.ErrorEvent{Code: "tools", Message: "the agent's tools could not be prepared"}, now())
		return turnResult{status: agent.StatusFailed, reason: "internal error: the agent's tools could not be prepared", messages: spec.history}
	}
	if r.d.Policy != nil {
		cfg.Gate = r.d.Policy.Gate(ctx, spec.info)
	}
	cfg.Budget = r.budget(ctx, spec)
	var res turnResult
	if named, ok := provider.(interface{ Name() string }); ok {
		res.provider = named.Name()
	}
	emit := func(e agent.Event) {
		switch e.Type {
		case agent.EventDone:
			return // the caller publishes done once the outcome is saved
		case agent.EventApprovalRequired:
			return // published with its approval id by the caller
		case agent.EventToolCall:
			res.toolCalls++
			iv.sawCall(e)
		case agent.EventFailover:
			r.failedOver(e)
		}
		hub.publish(string(e.Type), e.Data, now())
	}
	emit = r.durable(spec, &cfg, emit)
	var out agent.Result
	if spec.approval != nil {
		out, err = agent.Resume(ctx, cfg, spec.history, *spec.approval, emit)
	} else {
		out, err = agent.Run(ctx, cfg, spec.history, emit)
	}
	if err != nil { // an unusable config: nothing ran
		r.log.Error("agent: run refused", "session_id", spec.info.SessionID, "err", err)
		hub.publish(string(agent.EventError), agent.ErrorEvent{Code: "config", Message: err.Error()}, now())
		return turnResult{status: agent.StatusFailed, reason: err.Error(), messages: spec.history}
	}
	if out.Err != nil && out.Status == agent.StatusFailed {
		r.log.Warn("agent: run failed", "session_id", spec.info.SessionID, "code", out.Code, "err", out.Err)
	}
	r.learnWindow(ctx, spec.info, model, out) // and marks estimated usage
	res.status, res.reason, res.usage, res.cost, res.steps = out.Status, out.Reason, out.Usage, out.Cost, out.Steps
	res.messages, res.pending, res.model = out.Transcript, out.Pending, model
	if out.Status == agent.StatusCompleted {
		res.summary = summarize(out.Transcript)
	}
	iv.end(ctx, &res) // investigate.go: "no finding" when the model reported none
	return res
}

// toolSet is the knowledge tools plus whatever the policy layer adds.
func (r *Runner) toolSet(ctx context.Context, info RunInfo, iv *investigating) (*agent.ToolSet, error) {
	tools := knowledgeTools(r.d.Knowledge, info)
	if iv != nil {
		tools = append(tools, iv.tool())
	}
	if r.d.Policy != nil {
		tools = append(tools, r.d.Policy.Tools(ctx, info)...)
		tools = r.masked(info, tools)
	}
	return agent.NewToolSet(tools...)
}

// budget combines a run's own cost cap with the policy layer's budget.
func (r *Runner) budget(ctx context.Context, spec turnSpec) agent.Budget {
	var policy agent.Budget
	if r.d.Policy != nil {
		policy = r.d.Policy.Budget(ctx, spec.info)
	}
	if spec.maxCost <= 0 {
		return policy
	}
	return agent.BudgetFunc(func(used llm.Usage, cost float64) error {
		if cost >= spec.maxCost {
			return fmt.Errorf("the run reached its cost cap of $%.2f", spec.maxCost)
		}
		if policy != nil {
			return policy.Allow(used, cost)
		}
		return nil
	})
}

// publishApproval publishes approval.required with the approval's id.
func (r *Runner) publishApproval(hub *hub, p *agent.Pending, approvalID string) {
	hub.publish(string(agent.EventApprovalRequired), ApprovalRequired{ApprovalRequired: agent.ApprovalRequired{
		Step: p.Step, CallID: p.Call.ID, Name: p.Call.Name, Arguments: p.Call.Arguments, Reason: p.Reason},
		ApprovalID: approvalID}, r.d.Now())
}

// sessionStatus maps a turn's outcome to the session's status.
func sessionStatus(st agent.Status) string {
	switch st {
	case agent.StatusCompleted:
		return store.SessionCompleted
	case agent.StatusCancelled:
		return store.SessionCancelled
	case agent.StatusTimeout:
		return store.SessionTimeout
	case agent.StatusWaitingApproval:
		return store.SessionRunning
	}
	return store.SessionFailed
}

// requestApproval asks the policy layer to record an approval for a turn
// that stopped at a risky call; "" when there is none or it failed.
func (r *Runner) requestApproval(ctx context.Context, info RunInfo, p *agent.Pending) string {
	if r.d.Policy == nil || p == nil {
		return ""
	}
	id, err := r.d.Policy.ApprovalNeeded(ctx, info, p)
	if err != nil {
		r.log.Error("agent: approval not recorded", "session_id", info.SessionID, "err", err)
	}
	return id
}
