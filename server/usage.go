package server

import (
	"time"

	"github.com/opsagent/opsagent/store"
)

// Usage (spec 4.3): cost and tokens of the project's sessions, summed from
// the session rows themselves, so every figure equals the sum of the
// sessions the index lists for the same window. Periods count back from
// now in whole days (30d = the last 30×24 hours); trend days are UTC dates.

// UsagePeriodQuery is the period of the usage routes.
type UsagePeriodQuery struct {
	Period string `query:"period" default:"30d" validate:"oneof=7d 30d 90d all"`
}

// UsageTrendQuery is the period of the trend (no "all").
type UsageTrendQuery struct {
	Period string `query:"period" default:"30d" validate:"oneof=7d 30d 90d"`
}

// UsageTopQuery is a period and how many rows to return.
type UsageTopQuery struct {
	Period string `query:"period" default:"30d" validate:"oneof=7d 30d 90d all"`
	Limit  int    `query:"limit" default:"10" validate:"gte=1,lte=50"`
}

// UsageSummaryOut sums a period.
type UsageSummaryOut struct {
	Period            string     `json:"period"`
	Since             *time.Time `json:"since" doc:"start of the window; null for all"`
	Sessions          int        `json:"sessions"`
	TokensIn          int64      `json:"tokens_in"`
	TokensOut         int64      `json:"tokens_out"`
	TotalTokens       int64      `json:"total_tokens"`
	Cost              float64    `json:"cost" doc:"USD"`
	AvgCostPerSession float64    `json:"avg_cost_per_session"`
}

// UsageDayOut is one day of the trend.
type UsageDayOut struct {
	Date        string  `json:"date" doc:"YYYY-MM-DD (UTC)"`
	Sessions    int     `json:"sessions"`
	TokensIn    int64   `json:"tokens_in"`
	TokensOut   int64   `json:"tokens_out"`
	TotalTokens int64   `json:"total_tokens"`
	Cost        float64 `json:"cost"`
}

// UsageAgentOut is the usage of one agent type.
type UsageAgentOut struct {
	AgentType   string  `json:"agent_type"`
	Sessions    int     `json:"sessions"`
	TokensIn    int64   `json:"tokens_in"`
	TokensOut   int64   `json:"tokens_out"`
	TotalTokens int64   `json:"total_tokens"`
	Cost        float64 `json:"cost"`
}

// UsageTaskOut is the usage of one task's runs.
type UsageTaskOut struct {
	TaskID      string  `json:"task_id"`
	TaskName    string  `json:"task_name"`
	Runs        int     `json:"runs"`
	TokensIn    int64   `json:"tokens_in"`
	TokensOut   int64   `json:"tokens_out"`
	TotalTokens int64   `json:"total_tokens"`
	Cost        float64 `json:"cost"`
}

// UsageSessionOut is one of the most expensive sessions.
type UsageSessionOut struct {
	SessionID   string    `json:"session_id"`
	Title       string    `json:"title"`
	TaskName    string    `json:"task_name"`
	AgentType   string    `json:"agent_type"`
	Source      string    `json:"source"`
	Status      string    `json:"status"`
	TokensIn    int64     `json:"tokens_in"`
	TokensOut   int64     `json:"tokens_out"`
	TotalTokens int64     `json:"total_tokens"`
	Cost        float64   `json:"cost"`
	CreatedAt   time.Time `json:"created_at"`
}

// usageRoutes: cost and token figures of the current project.
func (s *Server) usageRoutes() []*Route {
	tags := []string{"usage"}
	return []*Route{
		{Method: "GET", Path: "/api/usage/summary", Summary: "Cost and token totals of the project's sessions over a period", Tags: tags, Auth: AuthAny, Perm: PermUsageRead, Project: true, Query: UsagePeriodQuery{}, Resp: UsageSummaryOut{}, Status: 200, MCP: true, Handle: s.handleUsageSummary},
		{Method: "GET", Path: "/api/usage/trend", Summary: "Daily cost and tokens (every day of the period, zeros included)", Tags: tags, Auth: AuthAny, Perm: PermUsageRead, Project: true, Query: UsageTrendQuery{}, Resp: []UsageDayOut{}, Status: 200, MCP: true, Handle: s.handleUsageTrend},
		{Method: "GET", Path: "/api/usage/by-agent", Summary: "Cost and tokens by agent type", Tags: tags, Auth: AuthAny, Perm: PermUsageRead, Project: true, Query: UsagePeriodQuery{}, Resp: []UsageAgentOut{}, Status: 200, MCP: true, Handle: s.handleUsageByAgent},
		{Method: "GET", Path: "/api/usage/by-task", Summary: "Top tasks by cost", Tags: tags, Auth: AuthAny, Perm: PermUsageRead, Project: true, Query: UsageTopQuery{}, Resp: []UsageTaskOut{}, Status: 200, MCP: true, Handle: s.handleUsageByTask},
		{Method: "GET", Path: "/api/usage/top-sessions", Summary: "Most expensive sessions", Tags: tags, Auth: AuthAny, Perm: PermUsageRead, Project: true, Query: UsageTopQuery{}, Resp: []UsageSessionOut{}, Status: 200, MCP: true, Handle: s.handleUsageTopSessions},
	}
}

// periodStart is the start of a period ("all": nil).
func periodStart(now time.Time, period string) *time.Time {
	days := map[string]int{"7d": 7, "30d": 30, "90d": 90}[period]
	if days == 0 {
		return nil
	}
	t := now.Add(-time.Duration(days) * 24 * time.Hour)
	return &t
}

func (s *Server) projectUsage(c *Ctx, period string) store.UsageScope {
	return store.UsageScope{OrgID: c.OrgID(), ProjectIDs: []string{c.ProjectID()}, Since: periodStart(s.Now(), period)}
}

// handleUsageSummary is GET /api/usage/summary.
func (s *Server) handleUsageSummary(c *Ctx) error {
	var q UsagePeriodQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	u := s.projectUsage(c, q.Period)
	r, err := s.db.UsageTotal(c.Context(), u)
	if err != nil {
		return err
	}
	out := UsageSummaryOut{Period: q.Period, Since: u.Since, Sessions: r.Sessions, TokensIn: r.TokensIn, TokensOut: r.TokensOut,
		TotalTokens: r.TokensIn + r.TokensOut, Cost: r.Cost}
	if r.Sessions > 0 {
		out.AvgCostPerSession = r.Cost / float64(r.Sessions)
	}
	return c.JSON(200, out)
}

// handleUsageTrend is GET /api/usage/trend.
func (s *Server) handleUsageTrend(c *Ctx) error {
	var q UsageTrendQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	u := s.projectUsage(c, q.Period)
	rows, err := s.db.UsageGrouped(c.Context(), u, "day", 0)
	if err != nil {
		return err
	}
	byDay := map[string]store.UsageRow{}
	for _, r := range rows {
		byDay[r.Key] = r
	}
	out := []UsageDayOut{}
	today := s.Now().UTC().Truncate(24 * time.Hour)
	for d := u.Since.UTC().Truncate(24 * time.Hour); !d.After(today); d = d.Add(24 * time.Hour) {
		day := d.Format("2006-01-02")
		r := byDay[day]
		out = append(out, UsageDayOut{Date: day, Sessions: r.Sessions, TokensIn: r.TokensIn, TokensOut: r.TokensOut,
			TotalTokens: r.TokensIn + r.TokensOut, Cost: r.Cost})
	}
	return c.JSON(200, out)
}

// handleUsageByAgent is GET /api/usage/by-agent.
func (s *Server) handleUsageByAgent(c *Ctx) error {
	var q UsagePeriodQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	rows, err := s.db.UsageGrouped(c.Context(), s.projectUsage(c, q.Period), "agent", 0)
	if err != nil {
		return err
	}
	out := make([]UsageAgentOut, len(rows))
	for i, r := range rows {
		out[i] = UsageAgentOut{AgentType: r.Key, Sessions: r.Sessions, TokensIn: r.TokensIn, TokensOut: r.TokensOut,
			TotalTokens: r.TokensIn + r.TokensOut, Cost: r.Cost}
	}
	return c.JSON(200, out)
}

// handleUsageByTask is GET /api/usage/by-task.
func (s *Server) handleUsageByTask(c *Ctx) error {
	var q UsageTopQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	rows, err := s.db.UsageGrouped(c.Context(), s.projectUsage(c, q.Period), "task", q.Limit)
	if err != nil {
		return err
	}
	out := make([]UsageTaskOut, len(rows))
	for i, r := range rows {
		out[i] = UsageTaskOut{TaskID: r.Key, TaskName: r.Label, Runs: r.Sessions, TokensIn: r.TokensIn, TokensOut: r.TokensOut,
			TotalTokens: r.TokensIn + r.TokensOut, Cost: r.Cost}
	}
	return c.JSON(200, out)
}

// handleUsageTopSessions is GET /api/usage/top-sessions.
func (s *Server) handleUsageTopSessions(c *Ctx) error {
	var q UsageTopQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	rows, err := s.db.TopSessions(c.Context(), s.projectUsage(c, q.Period), q.Limit)
	if err != nil {
		return err
	}
	out := make([]UsageSessionOut, len(rows))
	for i, a := range rows {
		out[i] = UsageSessionOut{SessionID: a.ID, Title: a.Title, TaskName: a.TaskName, AgentType: a.AgentType, Source: a.Source,
			Status: a.Status, TokensIn: a.TokensIn, TokensOut: a.TokensOut, TotalTokens: a.TokensIn + a.TokensOut, Cost: a.Cost,
			CreatedAt: a.CreatedAt}
	}
	return c.JSON(200, out)
}
