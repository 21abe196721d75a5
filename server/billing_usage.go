package server

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"time"

	"github.com/opsagent/opsagent/server/billing"
	"github.com/opsagent/opsagent/store"
)

// billingUsageRoutes: metering and statements.
func (s *Server) billingUsageRoutes() []*Route {
	tags := []string{"billing"}
	return []*Route{
		{Method: "GET", Path: "/api/billing/usage", Summary: "Metered usage of a period (default: the current month), recomputed from the recorded data while the month runs", Tags: tags, Auth: AuthAny, Perm: PermUsageRead, Query: UsageQuery{}, Resp: UsageOut{}, Status: 200, MCP: true, Handle: s.handleGetMeteredUsage},
		{Method: "GET", Path: "/api/billing/usage/history", Summary: "Metered usage per month, newest first", Tags: tags, Auth: AuthAny, Perm: PermUsageRead, Query: UsageHistoryQuery{}, Resp: UsageHistoryOut{}, Status: 200, Handle: s.handleUsageHistory},
		{Method: "GET", Path: "/api/billing/usage/breakdown", Summary: "Metered usage of a period per project and meter", Tags: tags, Auth: AuthAny, Perm: PermUsageRead, Query: UsageQuery{}, Resp: UsageBreakdownOut{}, Status: 200, Handle: s.handleUsageBreakdown},
		{Method: "POST", Path: "/api/billing/usage/recompute", Summary: "Recompute a period's metered usage from the recorded data (idempotent; an ended month keeps its knowledge snapshot and plan)", Tags: tags, Auth: AuthAny, Perm: PermOrgAdmin, Query: UsageQuery{}, Resp: UsageOut{}, Status: 200, Handle: s.handleRecomputeUsage},
		{Method: "GET", Path: "/api/billing/statements", Summary: "The org's monthly statements (totals), newest first", Tags: tags, Auth: AuthAny, Perm: PermUsageRead, Query: UsageHistoryQuery{}, Resp: StatementListOut{}, Status: 200, Handle: s.handleListStatements},
		{Method: "GET", Path: "/api/billing/statements/{period}", Summary: "One month's statement: the plan fee and a line per project and meter (format=json or csv)", Tags: tags, Auth: AuthAny, Perm: PermUsageRead, Query: StatementQuery{}, Resp: billing.Statement{}, Status: 200, Handle: s.handleGetStatement},
	}
}

const periodPattern = `^[0-9]{4}-(0[1-9]|1[0-2])$`

var periodRe = regexp.MustCompile(periodPattern)

// UsageQuery selects a period (YYYY-MM, UTC); empty is the current month.
type UsageQuery struct {
	Period string `query:"period" validate:"pattern=^([0-9]{4}-(0[1-9]|1[0-2]))?$"`
}

// UsageHistoryQuery bounds a history.
type UsageHistoryQuery struct {
	Months int `query:"months" default:"12" validate:"gte=1,lte=36"`
}

// StatementQuery picks the export format.
type StatementQuery struct {
	Format string `query:"format" default:"json" validate:"oneof=json csv"`
}

// UsageOut is an org's metered totals of one period.
type UsageOut struct {
	Period     string             `json:"period"`
	Status     string             `json:"status" doc:"open or closed"`
	PlanID     string             `json:"plan_id"`
	ComputedAt time.Time          `json:"computed_at"`
	Meters     map[string]float64 `json:"meters" doc:"agent_runs, agent_tokens, llm_cost_usd, webhook_events, knowledge_bytes"`
}

// UsageHistoryOut lists periods, newest first.
type UsageHistoryOut struct {
	Items []UsageOut `json:"items"`
}

// UsageBreakdownItem is one project's quantity of one meter.
type UsageBreakdownItem struct {
	ProjectID   string  `json:"project_id" doc:"empty for org-wide use"`
	ProjectName string  `json:"project_name"`
	Meter       string  `json:"meter"`
	Quantity    float64 `json:"quantity"`
}

// UsageBreakdownOut is a period per project and meter.
type UsageBreakdownOut struct {
	Period string               `json:"period"`
	Items  []UsageBreakdownItem `json:"items"`
}

// StatementSummary is one statement in a list.
type StatementSummary struct {
	Period   string  `json:"period"`
	Status   string  `json:"status"`
	PlanID   string  `json:"plan_id"`
	TotalUSD float64 `json:"total_usd"`
}

// StatementListOut lists statements, newest first.
type StatementListOut struct {
	Items []StatementSummary `json:"items"`
}

// period resolves a requested period: empty is the current month; a month
// that has not begun is a 422.
func (s *Server) period(raw string, loc ...any) (string, error) {
	cur := store.Period(s.Now())
	if raw == "" {
		return cur, nil
	}
	if !periodRe.MatchString(raw) {
		return "", invalid("String should match pattern '"+periodPattern+"'", "string_pattern_mismatch", loc...)
	}
	if raw > cur {
		return "", invalid("The period has not begun (current: "+cur+")", "value_error.period", loc...)
	}
	return raw, nil
}

func usageOut(h *store.UsagePeriod, rows []store.MeterRow) UsageOut {
	st := "open"
	if h.Closed {
		st = "closed"
	}
	return UsageOut{Period: h.Period, Status: st, PlanID: h.PlanID, ComputedAt: h.ComputedAt, Meters: billing.Totals(rows)}
}

// meterQuery meters the period a UsageQuery names (the current month when
// none) for the caller's org; force recomputes an ended month too.
func (s *Server) meterQuery(c *Ctx, force bool) (string, *store.UsagePeriod, []store.MeterRow, error) {
	var q UsageQuery
	if err := c.BindQuery(&q); err != nil {
		return "", nil, nil, err
	}
	period, err := s.period(q.Period, "query", "period")
	if err != nil {
		return "", nil, nil, err
	}
	h, rows, err := s.billing.Meter(c.Context(), c.OrgID(), period, force)
	return period, h, rows, err
}

func (s *Server) meteredUsage(c *Ctx, force bool) error {
	period, h, rows, err := s.meterQuery(c, force)
	if err != nil {
		return err
	}
	if force {
		c.Audit("billing.usage_recomputed", "success", "organization", c.OrgID(), map[string]any{"period": period})
	}
	return c.JSON(200, usageOut(h, rows))
}

// handleGetMeteredUsage is GET /api/billing/usage.
func (s *Server) handleGetMeteredUsage(c *Ctx) error { return s.meteredUsage(c, false) }

// handleRecomputeUsage is POST /api/billing/usage/recompute.
func (s *Server) handleRecomputeUsage(c *Ctx) error { return s.meteredUsage(c, true) }

// history meters the current month and any ended month not yet closed,
// then returns the stored periods, newest first.
func (s *Server) history(ctx context.Context, orgID string, months int) ([]store.UsagePeriod, error) {
	if _, _, err := s.billing.Meter(ctx, orgID, store.Period(s.Now()), false); err != nil {
		return nil, err
	}
	ps, err := s.db.FindUsagePeriods(ctx, orgID, months)
	if err != nil {
		return nil, err
	}
	for i, p := range ps {
		if !p.Closed && p.Period < store.Period(s.Now()) {
			h, _, err := s.billing.Meter(ctx, orgID, p.Period, false)
			if err != nil {
				return nil, err
			}
			ps[i] = *h
		}
	}
	return ps, nil
}

// historyQuery is history for the caller's org over the months a
// UsageHistoryQuery names (the usage history and the statement list share it).
func (s *Server) historyQuery(c *Ctx) ([]store.UsagePeriod, error) {
	var q UsageHistoryQuery
	if err := c.BindQuery(&q); err != nil {
		return nil, err
	}
	return s.history(c.Context(), c.OrgID(), q.Months)
}

// handleUsageHistory is GET /api/billing/usage/history.
func (s *Server) handleUsageHistory(c *Ctx) error {
	ps, err := s.historyQuery(c)
	if err != nil {
		return err
	}
	out := UsageHistoryOut{Items: []UsageOut{}}
	for i := range ps {
		rows, err := s.db.FindUsage(c.Context(), c.OrgID(), ps[i].Period)
		if err != nil {
			return err
		}
		out.Items = append(out.Items, usageOut(&ps[i], rows))
	}
	return c.JSON(200, out)
}

// handleUsageBreakdown is GET /api/billing/usage/breakdown.
func (s *Server) handleUsageBreakdown(c *Ctx) error {
	period, _, rows, err := s.meterQuery(c, false)
	if err != nil {
		return err
	}
	names, err := s.db.ProjectNames(c.Context(), c.OrgID())
	if err != nil {
		return err
	}
	billing.SortRows(rows)
	out := UsageBreakdownOut{Period: period, Items: []UsageBreakdownItem{}}
	for _, r := range rows {
		out.Items = append(out.Items, UsageBreakdownItem{ProjectID: r.ProjectID, ProjectName: names[r.ProjectID], Meter: r.Meter, Quantity: r.Quantity})
	}
	return c.JSON(200, out)
}

// handleListStatements is GET /api/billing/statements.
func (s *Server) handleListStatements(c *Ctx) error {
	ps, err := s.historyQuery(c)
	if err != nil {
		return err
	}
	out := StatementListOut{Items: []StatementSummary{}}
	for _, p := range ps {
		st, err := s.billing.Statement(c.Context(), c.OrgID(), p.Period)
		if err != nil {
			return err
		}
		out.Items = append(out.Items, StatementSummary{Period: st.Period, Status: st.Status, PlanID: st.PlanID, TotalUSD: st.TotalUSD})
	}
	return c.JSON(200, out)
}

// handleGetStatement is GET /api/billing/statements/{period}.
func (s *Server) handleGetStatement(c *Ctx) error {
	var q StatementQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	period, err := s.period(c.Param("period"), "path", "period")
	if err != nil {
		return err
	}
	st, err := s.billing.Statement(c.Context(), c.OrgID(), period)
	if err != nil {
		return err
	}
	if q.Format == "csv" {
		var b bytes.Buffer
		if err := st.WriteCSV(&b); err != nil {
			return err
		}
		c.W.Header().Set("Content-Type", "text/csv; charset=utf-8")
		c.W.Header().Set("Content-Disposition", `attachment; filename="statement-`+period+`.csv"`)
		c.W.WriteHeader(http.StatusOK)
		_, err := c.W.Write(b.Bytes())
		return err
	}
	return c.JSON(200, st)
}

// meterAll is the billing-metering job: every org's current month, and the
// month before until it is closed (retention must not erase it first).
func (s *Server) meterAll(ctx context.Context) error {
	orgs, err := s.db.OrgIDs(ctx)
	if err != nil {
		return err
	}
	now := s.Now()
	prev := store.Period(billing.MonthStart(now).AddDate(0, -1, 0))
	for _, org := range orgs {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if _, _, err := s.billing.Meter(ctx, org, store.Period(now), false); err != nil {
			return err
		}
		if h, err := s.db.FindUsagePeriod(ctx, org, prev); err == nil && !h.Closed {
			if _, _, err := s.billing.Meter(ctx, org, prev, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// RunBillingMetering runs the metering job once (tests).
func (s *Server) RunBillingMetering(ctx context.Context) error { return s.meterAll(ctx) }
