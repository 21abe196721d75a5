package server

import (
	"context"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/runner"
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

// PolicyForRun asks the runner's Policy (the policy layer) about run.
func (s *Server) PolicyForRun(ctx context.Context, run runner.RunInfo) PolicyRun {
	pl := policyLayer{s}
	return PolicyRun{Tools: pl.Tools(ctx, run), Gate: pl.Gate(ctx, run), Budget: pl.Budget(ctx, run),
		Obligations:  pl.Obligations(ctx, run),
		OpenApproval: func(p *agent.Pending) (string, error) { return pl.ApprovalNeeded(ctx, run, p) }}
}
