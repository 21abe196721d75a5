package server

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/store"
)

// billingWritable refuses changes in an org that is read-only (payment past
// due beyond the grace period) with 402. Reads, sign-in and the billing
// routes (to pay or to look) stay open: read-only never loses data.
func (s *Server) billingWritable(c *Ctx) error {
	if !s.billing.MaybeReadOnly() || c.ID == nil || c.ID.OrgID == "" {
		return nil
	}
	switch c.R.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	p := c.Route.Path
	if strings.HasPrefix(p, "/api/billing") || strings.HasPrefix(p, "/api/auth/") {
		return nil
	}
	a, err := s.db.FindBillingAccount(c.Context(), c.ID.OrgID)
	if err != nil {
		return err
	}
	if s.billing.ReadOnly(a, s.Now()) {
		return &store.QuotaError{ReadOnly: true, Plan: s.billing.PlanOf(a).ID}
	}
	return nil
}

// budgetFor is the Budget of one run: the spend caps of budgets.go, and the
// plan's monthly caps on runs, tokens and LLM cost. A run over a plan cap
// stops exactly like one over a budget (failed, budget_exceeded).
func (s *Server) budgetFor(ctx context.Context, run runner.RunInfo) agent.Budget {
	spend := s.spendBudget(ctx, run)
	caps, err := s.billing.AgentCaps(ctx, run.OrgID)
	if err != nil {
		return s.failClosed(run, err)
	}
	if caps == nil {
		return spend
	}
	var unmetered sync.Once
	return agent.BudgetFunc(func(used llm.Usage, cost float64) error {
		if why := caps.Start(); why != "" {
			// Refused before its first model call: the run never ran, so it
			// is neither metered nor counted against the cap.
			unmetered.Do(func() { s.markRunUnmetered(ctx, run) })
			return stopErr(why)
		}
		if why := caps.During(int64(used.Total()), cost); why != "" {
			return stopErr(why)
		}
		if spend != nil {
			return spend.Allow(used, cost)
		}
		return nil
	})
}

func (s *Server) markRunUnmetered(ctx context.Context, run runner.RunInfo) {
	if run.SessionID == "" {
		return
	}
	if err := s.db.MarkRunUnmetered(context.WithoutCancel(ctx), run.OrgID, run.SessionID); err != nil {
		s.log.Warn("billing: a refused run could not be marked unmetered; it counts as a run", "session_id", run.SessionID, "err", err)
	}
}

type stopErr string

func (e stopErr) Error() string { return string(e) }
