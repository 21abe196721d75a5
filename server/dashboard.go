package server

import (
	"sort"
	"time"

	"github.com/opsagent/opsagent/store"
)

// Dashboards (spec 4.3). stats, resources and agent-funnel describe the
// current project (X-Project-ID); org-summary and org-resources sum the
// projects of the current org the caller may see (restricted projects and
// an API key's allow-list respected), archived ones included.

// SessionCountsOut counts sessions by status.
type SessionCountsOut struct {
	Total           int `json:"total"`
	Pending         int `json:"pending"`
	Running         int `json:"running"`
	WaitingApproval int `json:"waiting_approval"`
	Completed       int `json:"completed"`
	Failed          int `json:"failed"`
	Cancelled       int `json:"cancelled"`
	Timeout         int `json:"timeout"`
}

// DashboardStats is the project's home page.
type DashboardStats struct {
	Sessions       SessionCountsOut `json:"sessions" doc:"all time"`
	Sessions24h    int              `json:"sessions_24h"`
	SuccessRate30d *float64         `json:"success_rate_30d" doc:"completed / finished sessions of the last 30 days; null when none finished"`
	Cost30d        float64          `json:"cost_30d"`
	Tokens30d      int64            `json:"tokens_30d"`
	TasksTotal     int              `json:"tasks_total"`
	TasksEnabled   int              `json:"tasks_enabled"`
	LastActivity   *time.Time       `json:"last_activity"`
}

// OrgProjectSummary is one project's line of the org summary.
type OrgProjectSummary struct {
	ProjectID  string  `json:"project_id"`
	Name       string  `json:"name"`
	Sessions30 int     `json:"sessions_30d"`
	Cost30d    float64 `json:"cost_30d"`
	Tokens30d  int64   `json:"tokens_30d"`
}

// OrgDashboardSummary sums the visible projects of the org.
type OrgDashboardSummary struct {
	Projects   int                 `json:"projects"`
	Sessions   SessionCountsOut    `json:"sessions" doc:"all time"`
	Sessions30 int                 `json:"sessions_30d"`
	Cost30d    float64             `json:"cost_30d"`
	Tokens30d  int64               `json:"tokens_30d"`
	ByProject  []OrgProjectSummary `json:"by_project" doc:"by cost over the last 30 days"`
	// Failovers24h counts steps whose model failed and a fallback answered
	// (server/model_settings.go): a primary that keeps failing shows here.
	Failovers24h int `json:"failovers_24h"`
}

// ProjectResourceSummary counts what the project holds.
type ProjectResourceSummary struct {
	ProjectID    string `json:"project_id"`
	Tasks        int    `json:"tasks"`
	TasksEnabled int    `json:"tasks_enabled"`
	Sessions     int    `json:"sessions"`
	Memories     int    `json:"memories" doc:"project memories (org-wide ones are in org-resources)"`
	Secrets      int    `json:"secrets" doc:"project secrets (names only ever)"`
	Members      int    `json:"members" doc:"explicit project members"`
}

// OrgResourceSummary counts what the org holds.
type OrgResourceSummary struct {
	Projects     int `json:"projects"`
	Members      int `json:"members"`
	APIKeys      int `json:"api_keys" doc:"live keys (not revoked, not expired)"`
	Tasks        int `json:"tasks"`
	TasksEnabled int `json:"tasks_enabled"`
	Sessions     int `json:"sessions"`
	Memories     int `json:"memories" doc:"project and org-wide"`
	Secrets      int `json:"secrets" doc:"project and org-wide, the LLM key excluded"`
}

// AgentFunnelQuery is the window of the funnel.
type AgentFunnelQuery struct {
	Days int `query:"days" default:"7" validate:"gte=1,lte=90"`
}

// AgentFunnelSummaryOut follows the sessions of the window through a run:
// created, started, used a tool, needed an approval, and how they ended.
type AgentFunnelSummaryOut struct {
	Days           int       `json:"days"`
	Since          time.Time `json:"since"`
	Created        int       `json:"created"`
	Started        int       `json:"started"`
	UsedTools      int       `json:"used_tools"`
	NeededApproval int       `json:"needed_approval"`
	Completed      int       `json:"completed"`
	Failed         int       `json:"failed"`
	Cancelled      int       `json:"cancelled"`
	Timeout        int       `json:"timeout"`
	InProgress     int       `json:"in_progress" doc:"pending or running now"`
	CompletionRate *float64  `json:"completion_rate" doc:"completed / started; null when none started"`
}

// dashboardRoutes: the console's summary pages.
func (s *Server) dashboardRoutes() []*Route {
	tags := []string{"dashboard"}
	return []*Route{
		{Method: "GET", Path: "/api/dashboard/stats", Summary: "The project's session, cost and task figures", Tags: tags, Auth: AuthAny, Perm: PermUsageRead, Project: true, Resp: DashboardStats{}, Status: 200, MCP: true, Handle: s.handleDashboardStats},
		{Method: "GET", Path: "/api/dashboard/org-summary", Summary: "Sessions and cost of the org's visible projects", Tags: tags, Auth: AuthAny, Perm: PermUsageRead, Resp: OrgDashboardSummary{}, Status: 200, MCP: true, Handle: s.handleOrgSummary},
		{Method: "GET", Path: "/api/dashboard/resources", Summary: "What the project holds", Tags: tags, Auth: AuthAny, Perm: PermUsageRead, Project: true, Resp: ProjectResourceSummary{}, Status: 200, MCP: true, Handle: s.handleProjectResources},
		{Method: "GET", Path: "/api/dashboard/org-resources", Summary: "What the org holds (visible projects)", Tags: tags, Auth: AuthAny, Perm: PermUsageRead, Resp: OrgResourceSummary{}, Status: 200, MCP: true, Handle: s.handleOrgResources},
		{Method: "GET", Path: "/api/dashboard/agent-funnel", Summary: "Sessions of the last days through each stage of a run", Tags: tags, Auth: AuthAny, Perm: PermUsageRead, Project: true, Query: AgentFunnelQuery{}, Resp: AgentFunnelSummaryOut{}, Status: 200, MCP: true, Handle: s.handleAgentFunnel},
	}
}

func countsOut(f store.SessionFunnel) SessionCountsOut {
	return SessionCountsOut{Total: f.Created, Pending: f.Pending, Running: f.Running, WaitingApproval: f.WaitingApproval,
		Completed: f.Completed, Failed: f.Failed, Cancelled: f.Cancelled, Timeout: f.Timeout}
}

func ratio(n, d int) *float64 {
	if d == 0 {
		return nil
	}
	r := float64(n) / float64(d)
	return &r
}

// handleDashboardStats is GET /api/dashboard/stats.
func (s *Server) handleDashboardStats(c *Ctx) error {
	ctx, now := c.Context(), s.Now()
	all := store.UsageScope{OrgID: c.OrgID(), ProjectIDs: []string{c.ProjectID()}}
	f, err := s.db.Funnel(ctx, all)
	if err != nil {
		return err
	}
	day, month := all, all
	t := now.Add(-24 * time.Hour)
	day.Since, month.Since = &t, periodStart(now, "30d")
	d, err := s.db.UsageTotal(ctx, day)
	if err != nil {
		return err
	}
	m, err := s.db.UsageTotal(ctx, month)
	if err != nil {
		return err
	}
	mf, err := s.db.Funnel(ctx, month)
	if err != nil {
		return err
	}
	res, err := s.db.CountResources(ctx, c.OrgID(), []string{c.ProjectID()})
	if err != nil {
		return err
	}
	return c.JSON(200, DashboardStats{Sessions: countsOut(f), Sessions24h: d.Sessions,
		SuccessRate30d: ratio(mf.Completed, mf.Completed+mf.Failed+mf.Cancelled+mf.Timeout), Cost30d: m.Cost,
		Tokens30d: m.TokensIn + m.TokensOut, TasksTotal: res.Tasks, TasksEnabled: res.EnabledTasks, LastActivity: f.LastActivity})
}

// visibleProjects lists the org's projects the caller may see.
func (s *Server) visibleProjects(c *Ctx) ([]*store.Project, []string, error) {
	ps, err := s.db.FindProjects(c.Context(), viewer(c.ID), true)
	if err != nil {
		return nil, nil, err
	}
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	return ps, ids, nil
}

// handleOrgSummary is GET /api/dashboard/org-summary.
func (s *Server) handleOrgSummary(c *Ctx) error {
	ps, ids, err := s.visibleProjects(c)
	if err != nil {
		return err
	}
	ctx := c.Context()
	all := store.UsageScope{OrgID: c.OrgID(), ProjectIDs: ids}
	f, err := s.db.Funnel(ctx, all)
	if err != nil {
		return err
	}
	out := OrgDashboardSummary{Projects: len(ps), Sessions: countsOut(f), ByProject: []OrgProjectSummary{}}
	since := periodStart(s.Now(), "30d")
	for _, p := range ps {
		r, err := s.db.UsageTotal(ctx, store.UsageScope{OrgID: c.OrgID(), ProjectIDs: []string{p.ID}, Since: since})
		if err != nil {
			return err
		}
		out.Sessions30 += r.Sessions
		out.Cost30d += r.Cost
		out.Tokens30d += r.TokensIn + r.TokensOut
		out.ByProject = append(out.ByProject, OrgProjectSummary{ProjectID: p.ID, Name: p.Name, Sessions30: r.Sessions,
			Cost30d: r.Cost, Tokens30d: r.TokensIn + r.TokensOut})
	}
	sortByCost(out.ByProject)
	if out.Failovers24h, err = s.db.CountOrgFailovers(ctx, c.OrgID(), s.Now().Add(-24*time.Hour)); err != nil {
		return err
	}
	return c.JSON(200, out)
}

func sortByCost(ps []OrgProjectSummary) {
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Cost30d > ps[j].Cost30d })
}

// handleProjectResources is GET /api/dashboard/resources.
func (s *Server) handleProjectResources(c *Ctx) error {
	r, err := s.db.CountResources(c.Context(), c.OrgID(), []string{c.ProjectID()})
	if err != nil {
		return err
	}
	return c.JSON(200, ProjectResourceSummary{ProjectID: c.ProjectID(), Tasks: r.Tasks, TasksEnabled: r.EnabledTasks,
		Sessions: r.Sessions, Memories: r.Memories, Secrets: r.Secrets, Members: r.ProjectMembers})
}

// handleOrgResources is GET /api/dashboard/org-resources.
func (s *Server) handleOrgResources(c *Ctx) error {
	ps, ids, err := s.visibleProjects(c)
	if err != nil {
		return err
	}
	r, err := s.db.CountResources(c.Context(), c.OrgID(), ids)
	if err != nil {
		return err
	}
	o, err := s.db.CountOrgResources(c.Context(), c.OrgID(), s.Now())
	if err != nil {
		return err
	}
	return c.JSON(200, OrgResourceSummary{Projects: len(ps), Members: o.Members, APIKeys: o.APIKeys, Tasks: r.Tasks,
		TasksEnabled: r.EnabledTasks, Sessions: r.Sessions, Memories: r.Memories + o.OrgMemories, Secrets: r.Secrets + o.OrgSecrets})
}

// handleAgentFunnel is GET /api/dashboard/agent-funnel.
func (s *Server) handleAgentFunnel(c *Ctx) error {
	var q AgentFunnelQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	since := s.Now().Add(-time.Duration(q.Days) * 24 * time.Hour)
	f, err := s.db.Funnel(c.Context(), store.UsageScope{OrgID: c.OrgID(), ProjectIDs: []string{c.ProjectID()}, Since: &since})
	if err != nil {
		return err
	}
	return c.JSON(200, AgentFunnelSummaryOut{Days: q.Days, Since: since, Created: f.Created, Started: f.Started,
		UsedTools: f.UsedTools, NeededApproval: f.NeededApproval, Completed: f.Completed, Failed: f.Failed,
		Cancelled: f.Cancelled, Timeout: f.Timeout, InProgress: f.Pending + f.Running,
		CompletionRate: ratio(f.Completed, f.Started)})
}
