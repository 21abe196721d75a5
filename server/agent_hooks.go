package server

import (
	"context"

	"github.com/opsagent/opsagent/server/agent"
)

// AgentRunInfo says whose run an agent hook is asked about.
type AgentRunInfo struct {
	OrgID         string
	ProjectID     string
	SessionID     string
	TaskID        string
	UserID        string // who started it ("" for scheduled and webhook runs)
	Source        string // webchat, telegram, slack, whatsapp, task
	TriggerSource string // manual, scheduled, webhook, web
}

// agentHooks are the seams between the session runner (which drives
// agent.Run and stores sessions) and the policy layer (tools, must_always /
// must_never rules, approvals, budgets). Either side can land without the
// other; a nil hook means "nothing extra".
type agentHooks struct {
	// tools returns the tools a run may call, beyond the runner's own.
	tools func(ctx context.Context, run AgentRunInfo) []agent.Tool
	// gate decides every tool call (allow, block with a reason, or ask a person).
	gate func(ctx context.Context, run AgentRunInfo) agent.Gate
	// budget stops a run that would exceed the project's or org's caps.
	budget func(ctx context.Context, run AgentRunInfo) agent.Budget
	// obligations is text added to the system prompt (must_always rules).
	obligations func(ctx context.Context, run AgentRunInfo) string
	// approvalNeeded records an approval for a run that stopped at a risky call.
	approvalNeeded func(ctx context.Context, run AgentRunInfo, p *agent.Pending) (approvalID string, err error)
	// resume continues a run that waited for approval, with the decision.
	resume func(ctx context.Context, run AgentRunInfo, decision agent.Approval) error
}
