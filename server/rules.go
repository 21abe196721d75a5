package server

import (
	"encoding/json"
	"github.com/opsagent/opsagent/server/sandbox"
	"time"

	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/store"
)

// Rules are the team's must_always / must_never rules for the agent. A
// project's rules and its org's (shared by every project) are enforced at
// execution of every tool call (policy.go); these routes manage them.

// RuleOut is one rule.
type RuleOut struct {
	ID               string    `json:"id"`
	Scope            string    `json:"scope" doc:"project or org"`
	ProjectID        *string   `json:"project_id"`
	Kind             string    `json:"kind" doc:"must_always or must_never"`
	Effect           string    `json:"effect" doc:"block (must_never), require_approval, allow (must_always), obligation (either: only told to the model)"`
	Description      string    `json:"description" doc:"what the model is told"`
	Tool             string    `json:"tool" doc:"tool name the rule applies to; empty or * for every tool"`
	MatchType        string    `json:"match_type" doc:"empty (every call of the tool), glob (whole rendered command, * any text), regex (RE2, found anywhere), command (a command pattern over what the shell line runs: name then argument globs, e.g. 'rm' or 'systemctl stop *') or effect (an effect category, e.g. deletes_files)"`
	Pattern          string    `json:"pattern"`
	Enabled          bool      `json:"enabled"`
	AllowOpaque      bool      `json:"allow_opaque" doc:"must_never only: let run_command calls the analysis cannot prove through (by default they are blocked)"`
	SourceApprovalID *string   `json:"source_approval_id" doc:"the approval whose 'approve and remember' made it"`
	CreatedBy        *string   `json:"created_by"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
}

// RuleListOut lists rules.
type RuleListOut struct {
	Items []RuleOut `json:"items"`
	Total int       `json:"total"`
}

// RuleCreate creates a rule. effect defaults to block (must_never) or
// require_approval (must_always) when the rule matches calls, else obligation.
type RuleCreate struct {
	Kind        string `json:"kind" validate:"required,oneof=must_always must_never"`
	Description string `json:"description" validate:"required,min=1,max=2000"`
	Effect      string `json:"effect" validate:"oneof=block require_approval obligation allow"`
	Tool        string `json:"tool" validate:"max=64,pattern=^([a-zA-Z0-9_-]+|\\*)?$"`
	MatchType   string `json:"match_type" validate:"oneof=glob regex command effect"`
	Pattern     string `json:"pattern" validate:"max=1000"`
	Enabled     *bool  `json:"enabled"`
	AllowOpaque bool   `json:"allow_opaque" doc:"must_never only: let calls the analysis cannot prove through, deliberately"`
}

// RuleUpdate edits a rule; absent fields stay. The kind never changes.
type RuleUpdate struct {
	Description *string `json:"description" validate:"nonnull,min=1,max=2000"`
	Effect      *string `json:"effect" validate:"nonnull,oneof=block require_approval obligation allow"`
	Tool        *string `json:"tool" validate:"nonnull,max=64,pattern=^([a-zA-Z0-9_-]+|\\*)?$"`
	MatchType   *string `json:"match_type" validate:"nonnull,oneof=glob regex command effect"`
	Pattern     *string `json:"pattern" validate:"nonnull,max=1000"`
	Enabled     *bool   `json:"enabled" validate:"nonnull"`
	AllowOpaque *bool   `json:"allow_opaque" validate:"nonnull"`
}

// RuleEvaluate is a tool call to try against the rules without running it.
type RuleEvaluate struct {
	Tool      string          `json:"tool" validate:"required,min=1,max=64"`
	Arguments json.RawMessage `json:"arguments" doc:"the call's arguments (a JSON object)"`
}

// RuleEvaluationOut is what the platform would decide for that call.
type RuleEvaluationOut struct {
	Verdict string   `json:"verdict" doc:"allow, block or need_approval"`
	Reason  string   `json:"reason"`
	Target  string   `json:"target"`
	Command string   `json:"command" doc:"the rendered command rules matched on"`
	RuleIDs []string `json:"rule_ids" doc:"the rules that decided"`
	// What run_command's line was parsed as (empty for other tools).
	Parsed   string   `json:"parsed" doc:"what the shell line runs, as parsed: 'rm -rf /srv/x via bash -c'"`
	Effects  []string `json:"effects" doc:"the effect categories of the line"`
	Opaque   []string `json:"opaque" doc:"why parts of the line cannot be proven (empty: fully analysed)"`
	ReadOnly bool     `json:"read_only" doc:"the analysis proves the whole line only reads"`
	// Sandbox is the kernel profile the call's commands would run under
	// (run_command only; on a connector the host narrows it further).
	Sandbox *sandbox.Profile `json:"sandbox,omitempty" doc:"the kernel sandbox profile the command would run under (run_command)"`
}

// ruleRoutes: project and org rules.
func (s *Server) ruleRoutes() []*Route {
	tags := []string{"rules"}
	return []*Route{
		{Method: "GET", Path: "/api/rules", Summary: "List the rules that apply to the project (its org's and its own)", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Project: true, Resp: RuleListOut{}, Status: 200, MCP: true, Handle: s.handleListRules},
		{Method: "POST", Path: "/api/rules", Summary: "Create a project rule", Tags: tags, Auth: AuthAny, Perm: PermRulesWrite, Project: true, Body: RuleCreate{}, Resp: RuleOut{}, Status: 201, MaxBody: 16 << 10, Handle: s.handleCreateRule},
		{Method: "POST", Path: "/api/rules/evaluate", Summary: "Decide a tool call against the rules without running it", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Project: true, Body: RuleEvaluate{}, Resp: RuleEvaluationOut{}, Status: 200, MaxBody: 64 << 10, MCP: true, Handle: s.handleEvaluateRules},
		{Method: "GET", Path: "/api/rules/{rule_id}", Summary: "Read a project rule", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Project: true, Resp: RuleOut{}, Status: 200, Handle: s.handleGetRule},
		{Method: "PATCH", Path: "/api/rules/{rule_id}", Summary: "Edit a project rule", Tags: tags, Auth: AuthAny, Perm: PermRulesWrite, Project: true, Body: RuleUpdate{}, Resp: RuleOut{}, Status: 200, MaxBody: 16 << 10, Handle: s.handleUpdateRule},
		{Method: "DELETE", Path: "/api/rules/{rule_id}", Summary: "Delete a project rule", Tags: tags, Auth: AuthAny, Perm: PermRulesWrite, Project: true, Status: 204, Handle: s.handleDeleteRule},
		{Method: "GET", Path: "/api/org-rules", Summary: "List the current org's rules (they apply to every project)", Tags: tags, Auth: AuthAny, Perm: PermOrgRead, Resp: RuleListOut{}, Status: 200, Handle: s.handleListRules},
		{Method: "POST", Path: "/api/org-rules", Summary: "Create an org rule", Tags: tags, Auth: AuthAny, Perm: PermRulesWrite, Body: RuleCreate{}, Resp: RuleOut{}, Status: 201, MaxBody: 16 << 10, Handle: s.handleCreateRule},
		{Method: "GET", Path: "/api/org-rules/{rule_id}", Summary: "Read an org rule", Tags: tags, Auth: AuthAny, Perm: PermOrgRead, Resp: RuleOut{}, Status: 200, Handle: s.handleGetRule},
		{Method: "PATCH", Path: "/api/org-rules/{rule_id}", Summary: "Edit an org rule", Tags: tags, Auth: AuthAny, Perm: PermRulesWrite, Body: RuleUpdate{}, Resp: RuleOut{}, Status: 200, MaxBody: 16 << 10, Handle: s.handleUpdateRule},
		{Method: "DELETE", Path: "/api/org-rules/{rule_id}", Summary: "Delete an org rule", Tags: tags, Auth: AuthAny, Perm: PermRulesWrite, Status: 204, Handle: s.handleDeleteRule},
	}
}

func ruleOut(r *store.Rule) RuleOut {
	o := RuleOut{ID: r.ID, Scope: "project", Kind: r.Kind, Effect: r.Effect, Description: r.Description, Tool: r.Tool,
		MatchType: r.MatchType, Pattern: r.Pattern, Enabled: r.Enabled, AllowOpaque: r.AllowOpaque, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if r.ProjectID == "" {
		o.Scope = "org"
	} else {
		o.ProjectID = &r.ProjectID
	}
	o.SourceApprovalID, o.CreatedBy = strPtr(r.SourceApprovalID), strPtr(r.CreatedBy)
	return o
}

// scopeProject is the project of a project route, "" on the org routes.
func scopeProject(c *Ctx) string {
	if c.Project != nil {
		return c.Project.ID
	}
	return ""
}

// handleListRules is GET /api/rules and GET /api/org-rules.
func (s *Server) handleListRules(c *Ctx) error {
	var rs []store.Rule
	var err error
	if p := scopeProject(c); p != "" {
		rs, err = s.db.FindRulesForProject(c.Context(), c.OrgID(), p, false)
	} else {
		rs, err = s.db.FindRules(c.Context(), c.OrgID(), "")
	}
	if err != nil {
		return err
	}
	out := RuleListOut{Items: make([]RuleOut, 0, len(rs)), Total: len(rs)}
	for i := range rs {
		out.Items = append(out.Items, ruleOut(&rs[i]))
	}
	return c.JSON(200, out)
}

// handleCreateRule is POST /api/rules and POST /api/org-rules.
func (s *Server) handleCreateRule(c *Ctx) error {
	var req RuleCreate
	if err := c.Bind(&req); err != nil {
		return err
	}
	r := &store.Rule{OrgID: c.OrgID(), ProjectID: scopeProject(c), Kind: req.Kind, Effect: req.Effect,
		Description: req.Description, Tool: req.Tool, MatchType: req.MatchType, Pattern: req.Pattern, Enabled: true,
		AllowOpaque: req.AllowOpaque, CreatedBy: c.ID.UserID}
	if req.Enabled != nil {
		r.Enabled = *req.Enabled
	}
	if r.Effect == "" {
		r.Effect = defaultEffect(r)
	}
	if _, err := compileRule(r); err != nil {
		return err
	}
	if err := s.db.CreateRule(c.Context(), r); err != nil {
		return err
	}
	c.Audit("rule.created", "success", "rule", r.ID, map[string]any{"kind": r.Kind, "effect": r.Effect, "scope": ruleOut(r).Scope, "allow_opaque": r.AllowOpaque})
	return c.JSON(201, ruleOut(r))
}

// defaultEffect: a rule that matches calls is enforced; one that does not
// is an obligation told to the model.
func defaultEffect(r *store.Rule) string {
	switch {
	case r.Tool == "" && r.MatchType == "":
		return store.EffectObligation
	case r.Kind == store.RuleMustNever:
		return store.EffectBlock
	default:
		return store.EffectRequireApproval
	}
}

// handleGetRule is GET /api/rules/{rule_id} and GET /api/org-rules/{rule_id}.
func (s *Server) handleGetRule(c *Ctx) error {
	id, err := c.IDParam("rule_id")
	if err != nil {
		return err
	}
	r, err := s.db.FindRule(c.Context(), c.OrgID(), scopeProject(c), id)
	if err != nil {
		return err
	}
	return c.JSON(200, ruleOut(r))
}

// handleUpdateRule is PATCH /api/rules/{rule_id} and PATCH /api/org-rules/{rule_id}.
func (s *Server) handleUpdateRule(c *Ctx) error {
	id, err := c.IDParam("rule_id")
	if err != nil {
		return err
	}
	var req RuleUpdate
	if err := c.Bind(&req); err != nil {
		return err
	}
	r, err := s.db.UpdateRule(c.Context(), c.OrgID(), scopeProject(c), id, store.RulePatch{Description: req.Description,
		Effect: req.Effect, Tool: req.Tool, MatchType: req.MatchType, Pattern: req.Pattern, Enabled: req.Enabled, AllowOpaque: req.AllowOpaque},
		func(r *store.Rule) error { _, err := compileRule(r); return err })
	if err != nil {
		return err
	}
	c.Audit("rule.updated", "success", "rule", r.ID, map[string]any{"kind": r.Kind, "effect": r.Effect, "enabled": r.Enabled, "allow_opaque": r.AllowOpaque})
	return c.JSON(200, ruleOut(r))
}

// handleDeleteRule is DELETE /api/rules/{rule_id} and DELETE /api/org-rules/{rule_id}.
func (s *Server) handleDeleteRule(c *Ctx) error {
	id, err := c.IDParam("rule_id")
	if err != nil {
		return err
	}
	if err := s.db.DeleteRule(c.Context(), c.OrgID(), scopeProject(c), id); err != nil {
		return err
	}
	c.Audit("rule.deleted", "success", "rule", id, nil)
	return c.NoContent()
}

// handleEvaluateRules is POST /api/rules/evaluate: the exact decision the
// gate would take for this call in this project now.
func (s *Server) handleEvaluateRules(c *Ctx) error {
	var req RuleEvaluate
	if err := c.Bind(&req); err != nil {
		return err
	}
	if len(req.Arguments) == 0 {
		req.Arguments = json.RawMessage("{}")
	}
	var obj map[string]any
	if json.Unmarshal(req.Arguments, &obj) != nil || obj == nil {
		return invalid("arguments must be a JSON object", "type_error", "body", "arguments")
	}
	run := runner.RunInfo{OrgID: c.OrgID(), ProjectID: c.ProjectID(), UserID: c.ID.UserID}
	tool := s.policyToolByName(c.Context(), run, req.Tool)
	if tool == nil {
		return invalid("no tool named "+req.Tool+" in this project", "value_error", "body", "tool")
	}
	d, err := s.evaluateCall(c.Context(), run, tool, req.Tool, req.Arguments)
	if err != nil {
		return err
	}
	out := RuleEvaluationOut{Verdict: string(d.verdict.Verdict), Reason: d.verdict.Reason, Target: d.view.Rendered.Target,
		Command: d.view.Rendered.Command, RuleIDs: d.ruleIDs, Effects: []string{}, Opaque: []string{}}
	if out.RuleIDs == nil {
		out.RuleIDs = []string{}
	}
	if sc := d.view.Scan; sc != nil {
		out.Parsed, out.ReadOnly = sc.a.Summary(), sc.readOnly
		out.Effects, out.Opaque = sc.effectNames(), sc.opaqueReasons()
		p := d.sandbox
		p.LandlockABI = s.kernel().LandlockABI
		out.Sandbox = &p
	}
	return c.JSON(200, out)
}
