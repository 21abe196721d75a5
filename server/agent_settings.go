package server

import (
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/store"
)

// A project's own additions to the agent: instructions shown after the
// platform's prompt (they add to it, never replace the method, the rules
// or the approvals) and its evidence pack budget. Changes are audited.

// AgentSettingsOut is a project's agent settings.
type AgentSettingsOut struct {
	Instructions         string     `json:"instructions" doc:"shown to the model after the platform's system prompt"`
	EvidenceBudgetTokens int        `json:"evidence_budget_tokens" doc:"the evidence pack's budget; 0 means the default (8000)"`
	UpdatedBy            *string    `json:"updated_by"`
	UpdatedAt            *time.Time `json:"updated_at"`
}

// AgentSettingsUpdate replaces them.
type AgentSettingsUpdate struct {
	Instructions         string `json:"instructions" validate:"max=20000"`
	EvidenceBudgetTokens int    `json:"evidence_budget_tokens" validate:"gte=0,lte=100000"`
}

func (s *Server) agentSettingsRoutes() []*Route {
	tags := []string{"projects"}
	return []*Route{
		{Method: "GET", Path: "/api/agent-settings", Summary: "The project's own instructions to the agent and its evidence budget",
			Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Project: true, Resp: AgentSettingsOut{}, Status: 200, Handle: s.handleGetAgentSettings},
		{Method: "PUT", Path: "/api/agent-settings", Summary: "Replace the project's instructions to the agent and its evidence budget (audited)",
			Tags: tags, Auth: AuthAny, Perm: PermProjectWrite, Project: true, Body: AgentSettingsUpdate{}, Resp: AgentSettingsOut{}, Status: 200, MaxBody: 64 << 10, Handle: s.handlePutAgentSettings},
	}
}

func agentSettingsOut(a *store.AgentSettings) AgentSettingsOut {
	return AgentSettingsOut{Instructions: a.Instructions, EvidenceBudgetTokens: a.EvidenceBudgetTokens, UpdatedBy: optStr(a.UpdatedBy), UpdatedAt: a.UpdatedAt}
}

// handleGetAgentSettings is GET /api/agent-settings.
func (s *Server) handleGetAgentSettings(c *Ctx) error {
	a, err := s.db.ProjectAgentSettings(c.Context(), c.OrgID(), c.ProjectID())
	if err != nil {
		return err
	}
	return c.JSON(200, agentSettingsOut(a))
}

// handlePutAgentSettings is PUT /api/agent-settings.
func (s *Server) handlePutAgentSettings(c *Ctx) error {
	var req AgentSettingsUpdate
	if err := c.Bind(&req); err != nil {
		return err
	}
	old, err := s.db.ProjectAgentSettings(c.Context(), c.OrgID(), c.ProjectID())
	if err != nil {
		return err
	}
	a := &store.AgentSettings{Instructions: strings.TrimSpace(req.Instructions), EvidenceBudgetTokens: req.EvidenceBudgetTokens, UpdatedBy: c.ID.UserID}
	if err := s.db.PutProjectAgentSettings(c.Context(), c.OrgID(), c.ProjectID(), a); err != nil {
		return err
	}
	// The audit log keeps what changed, with the project's secret values
	// masked: instructions are free text, and a pasted token must not be
	// copied into an append-only log every auditor reads.
	mask, err := policyLayer{s}.Masker(c.Context(), runner.RunInfo{OrgID: c.OrgID(), ProjectID: c.ProjectID()})
	if err != nil {
		mask = func(string) string { return "[withheld: the secrets to mask it with could not be read]" }
	}
	c.Audit("project.agent_settings_changed", "success", "project", c.ProjectID(), map[string]any{
		"instructions_before": mask(old.Instructions), "instructions_after": mask(a.Instructions),
		"evidence_budget_before": old.EvidenceBudgetTokens, "evidence_budget_after": a.EvidenceBudgetTokens})
	return c.JSON(200, agentSettingsOut(a))
}
