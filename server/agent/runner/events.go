package runner

import (
	"context"
	"time"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
)

// RunInfo says whose run a turn is, and what the policy is asked about.
type RunInfo struct {
	OrgID         string
	ProjectID     string
	SessionID     string
	TaskID        string
	UserID        string // who started it ("" for scheduled and webhook runs)
	Source        string // webchat, telegram, slack, whatsapp, task
	TriggerSource string // manual, scheduled, webhook, web
}

// Policy is the seam between the runner (which drives agent.Run and stores
// sessions) and the policy layer (tools, must_always / must_never rules,
// approvals, budgets).
type Policy interface {
	// Tools returns the tools a run may call, beyond the runner's own.
	Tools(ctx context.Context, run RunInfo) []agent.Tool
	// Gate decides every tool call (allow, block with a reason, or ask a person).
	Gate(ctx context.Context, run RunInfo) agent.Gate
	// Budget stops a run that would exceed the project's or org's caps.
	Budget(ctx context.Context, run RunInfo) agent.Budget
	// Obligations is text added to the system prompt (must_always rules).
	Obligations(ctx context.Context, run RunInfo) string
	// ApprovalNeeded records an approval for a run that stopped at a risky call.
	ApprovalNeeded(ctx context.Context, run RunInfo, p *agent.Pending) (approvalID string, err error)
}

// Event is one event of a session as Subscribe yields it: numbered per
// session (Seq, increasing across turns), named (Type: session,
// message.delta, message, usage, tool.call, tool.output, tool.result, approval.required,
// error, done) and carrying one JSON object (Data).
type Event struct {
	Seq  int64
	Type string
	Data []byte
	At   time.Time
}

// Event names the runner publishes itself (the agent loop names the rest).
const (
	EventSession = "session"
)

// SessionStarted is the payload of the session event: the first of every turn.
type SessionStarted struct {
	SessionID     string `json:"session_id"`
	Turn          int    `json:"turn"`
	Status        string `json:"status"`
	Source        string `json:"source"`
	TriggerSource string `json:"trigger_source"`
	FirstEventID  int64  `json:"first_event_id"`
}

// ApprovalRequired is the payload of approval.required.
type ApprovalRequired struct {
	agent.ApprovalRequired
	ApprovalID string `json:"approval_id,omitempty" doc:"the approval record to decide, when the policy layer opened one"`
}

// Done is the payload of done: the turn's outcome and the session's totals.
type Done struct {
	Status           string    `json:"status" doc:"the session's status now"`
	WaitingApproval  bool      `json:"waiting_approval"`
	AgentStatus      string    `json:"agent_status" doc:"completed, failed, cancelled, timeout or waiting_approval"`
	Reason           string    `json:"reason,omitempty"`
	Steps            int       `json:"steps"`
	Usage            llm.Usage `json:"usage" doc:"this turn"`
	Cost             float64   `json:"cost" doc:"this turn, USD"`
	SessionTokensIn  int64     `json:"session_tokens_in"`
	SessionTokensOut int64     `json:"session_tokens_out"`
	SessionCost      float64   `json:"session_cost"`
}
