package server

import (
	"context"

	"github.com/opsagent/opsagent/server/agent"
)

// PolicyRun is what the policy hooks give one run, for tests that drive
// agent.Run directly with the server's real tools, gate and budget.
type PolicyRun struct {
	Tools       []agent.Tool
	Gate        agent.Gate
	Budget      agent.Budget
	Obligations string
	// OpenApproval records the approval a paused run waits for.
	OpenApproval func(p *agent.Pending) (string, error)
}

// PolicyForRun calls the installed agent hooks for run.
func (s *Server) PolicyForRun(ctx context.Context, run AgentRunInfo) PolicyRun {
	return PolicyRun{Tools: s.agent.tools(ctx, run), Gate: s.agent.gate(ctx, run), Budget: s.agent.budget(ctx, run),
		Obligations:  s.agent.obligations(ctx, run),
		OpenApproval: func(p *agent.Pending) (string, error) { return s.agent.approvalNeeded(ctx, run, p) }}
}
