package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/store"
)

// Budgets cap what the agent may spend: cost per UTC day and per UTC month
// for a project and for its whole org, and tokens per session. A run is
// checked before every model call; one that reached a cap stops with
// status failed, code budget_exceeded and a reason naming the cap.

// BudgetCaps are the caps of one scope; null is no cap.
type BudgetCaps struct {
	DailyCostUSD   *float64 `json:"daily_cost_usd" validate:"gte=0,lte=1000000"`
	MonthlyCostUSD *float64 `json:"monthly_cost_usd" validate:"gte=0,lte=10000000"`
	SessionTokens  *int64   `json:"session_tokens" validate:"gte=1,lte=100000000"`
}

// BudgetSpend is what the scope's sessions cost so far, in USD.
type BudgetSpend struct {
	Today     float64 `json:"today"`
	ThisMonth float64 `json:"this_month"`
}

// BudgetOut is one scope's caps beside its spend.
type BudgetOut struct {
	Scope     string      `json:"scope" doc:"project or org"`
	Caps      BudgetCaps  `json:"caps"`
	Spend     BudgetSpend `json:"spend"`
	UpdatedAt *time.Time  `json:"updated_at"`
}

// BudgetStatusOut is what applies to a project: its own caps and its org's.
type BudgetStatusOut struct {
	Project *BudgetOut `json:"project,omitempty"`
	Org     BudgetOut  `json:"org"`
}

// budgetRoutes: caps and spend of the project and of the org.
func (s *Server) budgetRoutes() []*Route {
	tags := []string{"budgets"}
	return []*Route{
		{Method: "GET", Path: "/api/budget", Summary: "The project's and its org's caps against spend", Tags: tags, Auth: AuthAny, Perm: PermUsageRead, Project: true, Resp: BudgetStatusOut{}, Status: 200, MCP: true, Handle: s.handleGetBudget},
		{Method: "PUT", Path: "/api/budget", Summary: "Set the project's caps (null: no cap)", Tags: tags, Auth: AuthAny, Perm: PermRulesWrite, Project: true, Body: BudgetCaps{}, Resp: BudgetStatusOut{}, Status: 200, MaxBody: 4 << 10, Handle: s.handlePutBudget},
		{Method: "GET", Path: "/api/org-budget", Summary: "The current org's caps against spend", Tags: tags, Auth: AuthAny, Perm: PermUsageRead, Resp: BudgetStatusOut{}, Status: 200, Handle: s.handleGetBudget},
		{Method: "PUT", Path: "/api/org-budget", Summary: "Set the org's caps, shared by all its projects (null: no cap)", Tags: tags, Auth: AuthAny, Perm: PermRulesWrite, Body: BudgetCaps{}, Resp: BudgetStatusOut{}, Status: 200, MaxBody: 4 << 10, Handle: s.handlePutBudget},
	}
}

// periodStarts are the starts of the current UTC day and month.
func periodStarts(now time.Time) (day, month time.Time) {
	now = now.UTC()
	return time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC),
		time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
}

func (s *Server) budgetOut(ctx context.Context, orgID, projectID string) (*BudgetOut, error) {
	b, err := s.db.FindBudget(ctx, orgID, projectID)
	if err != nil {
		return nil, err
	}
	day, month := periodStarts(s.Now())
	sp, err := s.db.FindSpend(ctx, orgID, projectID, day, month)
	if err != nil {
		return nil, err
	}
	scope := "project"
	if projectID == "" {
		scope = "org"
	}
	return &BudgetOut{Scope: scope, Caps: BudgetCaps{DailyCostUSD: b.DailyCostUSD, MonthlyCostUSD: b.MonthlyCostUSD,
		SessionTokens: b.SessionTokens}, Spend: BudgetSpend{Today: sp.Day, ThisMonth: sp.Month}, UpdatedAt: b.UpdatedAt}, nil
}

func (s *Server) budgetStatus(ctx context.Context, orgID, projectID string) (*BudgetStatusOut, error) {
	org, err := s.budgetOut(ctx, orgID, "")
	if err != nil {
		return nil, err
	}
	out := &BudgetStatusOut{Org: *org}
	if projectID != "" {
		if out.Project, err = s.budgetOut(ctx, orgID, projectID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// handleGetBudget is GET /api/budget and GET /api/org-budget.
func (s *Server) handleGetBudget(c *Ctx) error {
	out, err := s.budgetStatus(c.Context(), c.OrgID(), scopeProject(c))
	if err != nil {
		return err
	}
	return c.JSON(200, out)
}

// handlePutBudget is PUT /api/budget and PUT /api/org-budget.
func (s *Server) handlePutBudget(c *Ctx) error {
	var req BudgetCaps
	if err := c.Bind(&req); err != nil {
		return err
	}
	b := &store.Budget{OrgID: c.OrgID(), ProjectID: scopeProject(c), DailyCostUSD: req.DailyCostUSD,
		MonthlyCostUSD: req.MonthlyCostUSD, SessionTokens: req.SessionTokens, UpdatedBy: c.ID.UserID}
	if err := s.db.PutBudget(c.Context(), b); err != nil {
		return err
	}
	c.Audit("budget.updated", "success", "budget", orEmptyID(b.ProjectID, b.OrgID), map[string]any{
		"daily_cost_usd": req.DailyCostUSD, "monthly_cost_usd": req.MonthlyCostUSD, "session_tokens": req.SessionTokens})
	return s.handleGetBudget(c)
}

func orEmptyID(id, def string) string {
	if id == "" {
		return def
	}
	return id
}

// budgetFor is the Budget of one run: spend and session tokens are read
// once at its start, and the run's own cost and tokens are added as it
// goes. Runs in parallel each see the spend committed before they started.
func (s *Server) spendBudget(ctx context.Context, run runner.RunInfo) agent.Budget {
	type capped struct {
		name         string
		daily, month *float64
		spend        store.Spend
	}
	var scopes []capped
	var tokenCap *int64
	day, month := periodStarts(s.Now())
	for _, scope := range []struct{ name, project string }{{"project", run.ProjectID}, {"organization", ""}} {
		b, err := s.db.FindBudget(ctx, run.OrgID, scope.project)
		if err != nil {
			return s.failClosed(run, err)
		}
		if b.SessionTokens != nil && (tokenCap == nil || *b.SessionTokens < *tokenCap) {
			tokenCap = b.SessionTokens
		}
		if b.DailyCostUSD == nil && b.MonthlyCostUSD == nil {
			continue
		}
		sp, err := s.db.FindSpend(ctx, run.OrgID, scope.project, day, month)
		if err != nil {
			return s.failClosed(run, err)
		}
		scopes = append(scopes, capped{scope.name, b.DailyCostUSD, b.MonthlyCostUSD, sp})
	}
	var priorTokens int64
	if tokenCap != nil && run.SessionID != "" {
		n, err := s.db.SessionTokens(ctx, run.OrgID, run.SessionID)
		if err != nil {
			return s.failClosed(run, err)
		}
		priorTokens = n
	}
	if len(scopes) == 0 && tokenCap == nil {
		return nil
	}
	return agent.BudgetFunc(func(used llm.Usage, cost float64) error {
		if tokenCap != nil && priorTokens+int64(used.Total()) >= *tokenCap {
			return fmt.Errorf("the session reached its cap of %d tokens (%d used)", *tokenCap, priorTokens+int64(used.Total()))
		}
		for _, c := range scopes {
			if c.daily != nil && c.spend.Day+cost >= *c.daily {
				return fmt.Errorf("the %s's daily cap of $%.2f is reached ($%.4f spent today, UTC)", c.name, *c.daily, c.spend.Day+cost)
			}
			if c.month != nil && c.spend.Month+cost >= *c.month {
				return fmt.Errorf("the %s's monthly cap of $%.2f is reached ($%.4f spent this month, UTC)", c.name, *c.month, c.spend.Month+cost)
			}
		}
		return nil
	})
}

// failClosed stops a run whose caps cannot be read: an unreadable budget
// must not mean an unlimited one.
func (s *Server) failClosed(run runner.RunInfo, err error) agent.Budget {
	s.log.Error("policy: budget unreadable; run stopped", "project_id", run.ProjectID, "err", err)
	return agent.BudgetFunc(func(llm.Usage, float64) error {
		return errors.New("the budget could not be checked")
	})
}
