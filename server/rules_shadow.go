package server

import (
	"context"
	"time"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/store"
)

// Shadow rules are rules on trial. They live apart from the rules every
// enforcement path reads, so they decide nothing; the gate evaluates each
// one beside the live rules and records the calls it would have decided
// differently (recordShadow), until its trial ends. Then a person promotes
// it to a live rule or deletes it.

// ShadowRuleIn creates a shadow rule: a rule as POST /api/rules takes it and a trial length.
type ShadowRuleIn struct {
	RuleCreate
	TrialDays int `json:"trial_days" validate:"gte=0,lte=90" doc:"how long it records (1 to 90 days, default 7)"`
}

// ShadowRuleOut is a shadow rule with its count of recorded calls.
type ShadowRuleOut struct {
	RuleOut
	Shadow     bool      `json:"shadow" doc:"always true: it decides nothing"`
	TrialUntil time.Time `json:"trial_until"`
	OnTrial    bool      `json:"on_trial" doc:"still recording"`
	Hits       int       `json:"hits" doc:"calls it would have decided differently"`
}

// ShadowHitOut is one call a shadow rule would have decided differently.
type ShadowHitOut struct {
	ID        string    `json:"id"`
	SessionID *string   `json:"session_id"`
	At        time.Time `json:"at"`
	Tool      string    `json:"tool"`
	Command   string    `json:"command"`
	Actual    string    `json:"actual" doc:"what the live rules decided"`
	Would     string    `json:"would" doc:"what they would have decided with this rule"`
}

// ShadowRuleDetailOut is a shadow rule with its latest hits.
type ShadowRuleDetailOut struct {
	ShadowRuleOut
	Recorded []ShadowHitOut `json:"recorded"`
}

// ShadowRuleListOut lists shadow rules.
type ShadowRuleListOut struct {
	Items []ShadowRuleOut `json:"items"`
	Total int             `json:"total"`
}

func (s *Server) ruleWhatIfRoutes() []*Route {
	tags := []string{"rules"}
	return []*Route{
		{Method: "POST", Path: "/api/rules/preview", Summary: "What-if: replay the project's recorded tool calls through a proposed rule change", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Project: true, Body: RulePreviewIn{}, Resp: RulePreviewOut{}, Status: 200, MaxBody: 256 << 10, MCP: true, Handle: s.handlePreviewRules},
		{Method: "GET", Path: "/api/rules/shadow", Summary: "List the project's shadow rules (on trial; they decide nothing)", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Project: true, Resp: ShadowRuleListOut{}, Status: 200, Handle: s.handleListShadowRules},
		{Method: "POST", Path: "/api/rules/shadow", Summary: "Create a shadow rule: it records what it would have done for a trial period", Tags: tags, Auth: AuthAny, Perm: PermRulesWrite, Project: true, Body: ShadowRuleIn{}, Resp: ShadowRuleOut{}, Status: 201, MaxBody: 16 << 10, Handle: s.handleCreateShadowRule},
		{Method: "GET", Path: "/api/rules/shadow/{rule_id}", Summary: "Read a shadow rule with what it recorded", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Project: true, Resp: ShadowRuleDetailOut{}, Status: 200, Handle: s.handleGetShadowRule},
		{Method: "DELETE", Path: "/api/rules/shadow/{rule_id}", Summary: "Delete a shadow rule", Tags: tags, Auth: AuthAny, Perm: PermRulesWrite, Project: true, Status: 204, Handle: s.handleDeleteShadowRule},
		{Method: "POST", Path: "/api/rules/shadow/{rule_id}/promote", Summary: "Make a shadow rule a live project rule", Tags: tags, Auth: AuthAny, Perm: PermRulesWrite, Project: true, Resp: RuleOut{}, Status: 201, Handle: s.handlePromoteShadowRule},
	}
}

func (s *Server) shadowOut(r *store.ShadowRule) ShadowRuleOut {
	return ShadowRuleOut{RuleOut: ruleOut(&r.Rule), Shadow: true, TrialUntil: r.TrialUntil, OnTrial: s.Now().Before(r.TrialUntil), Hits: r.Hits}
}

// handleListShadowRules is GET /api/rules/shadow.
func (s *Server) handleListShadowRules(c *Ctx) error {
	rs, err := s.db.FindShadowRules(c.Context(), c.OrgID(), c.ProjectID(), nil)
	if err != nil {
		return err
	}
	out := ShadowRuleListOut{Items: make([]ShadowRuleOut, 0, len(rs)), Total: len(rs)}
	for i := range rs {
		out.Items = append(out.Items, s.shadowOut(&rs[i]))
	}
	return c.JSON(200, out)
}

// handleCreateShadowRule is POST /api/rules/shadow.
func (s *Server) handleCreateShadowRule(c *Ctx) error {
	var req ShadowRuleIn
	if err := c.Bind(&req); err != nil {
		return err
	}
	if req.TrialDays == 0 {
		req.TrialDays = 7
	}
	r := &store.ShadowRule{Rule: store.Rule{OrgID: c.OrgID(), ProjectID: c.ProjectID(), Kind: req.Kind, Effect: req.Effect,
		Description: req.Description, Tool: req.Tool, MatchType: req.MatchType, Pattern: req.Pattern, Enabled: true,
		AllowOpaque: req.AllowOpaque, CreatedBy: c.ID.UserID}, TrialUntil: s.Now().AddDate(0, 0, req.TrialDays)}
	if r.Effect == "" {
		r.Effect = defaultEffect(&r.Rule)
	}
	if r.Effect == store.EffectObligation {
		return invalid("a shadow rule matches calls: an obligation only told to the model has nothing to record", "value_error", "body", "effect")
	}
	if _, err := compileRule(&r.Rule); err != nil {
		return err
	}
	if err := s.db.CreateShadowRule(c.Context(), r); err != nil {
		return err
	}
	c.Audit("rule.shadow_created", "success", "rule", r.ID, map[string]any{"kind": r.Kind, "effect": r.Effect, "trial_days": req.TrialDays})
	return c.JSON(201, s.shadowOut(r))
}

// handleGetShadowRule is GET /api/rules/shadow/{rule_id}.
func (s *Server) handleGetShadowRule(c *Ctx) error {
	id, err := c.IDParam("rule_id")
	if err != nil {
		return err
	}
	r, err := s.db.FindShadowRule(c.Context(), c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	hits, err := s.db.FindShadowHits(c.Context(), r.ID, 200)
	if err != nil {
		return err
	}
	out := ShadowRuleDetailOut{ShadowRuleOut: s.shadowOut(r), Recorded: make([]ShadowHitOut, 0, len(hits))}
	for _, h := range hits {
		out.Recorded = append(out.Recorded, ShadowHitOut{ID: h.ID, SessionID: optStr(h.SessionID), At: h.At, Tool: h.Tool,
			Command: h.Command, Actual: h.Actual, Would: h.Would})
	}
	return c.JSON(200, out)
}

// handleDeleteShadowRule is DELETE /api/rules/shadow/{rule_id}.
func (s *Server) handleDeleteShadowRule(c *Ctx) error {
	id, err := c.IDParam("rule_id")
	if err != nil {
		return err
	}
	if err := s.db.DeleteShadowRule(c.Context(), c.OrgID(), c.ProjectID(), id); err != nil {
		return err
	}
	c.Audit("rule.shadow_deleted", "success", "rule", id, nil)
	return c.NoContent()
}

// handlePromoteShadowRule is POST /api/rules/shadow/{rule_id}/promote.
func (s *Server) handlePromoteShadowRule(c *Ctx) error {
	id, err := c.IDParam("rule_id")
	if err != nil {
		return err
	}
	r, err := s.db.PromoteShadowRule(c.Context(), c.OrgID(), c.ProjectID(), id, c.ID.UserID)
	if err != nil {
		return err
	}
	c.Audit("rule.created", "success", "rule", r.ID, map[string]any{"kind": r.Kind, "effect": r.Effect, "scope": "project", "promoted_from_shadow": true})
	return c.JSON(201, ruleOut(r))
}

// recordShadow evaluates the project's shadow rules on trial beside the
// live rules for one call the gate decided, and records each that would
// have changed the verdict or decided it itself. It never changes the
// decision and never fails the call: errors are logged.
func (s *Server) recordShadow(ctx context.Context, run runner.RunInfo, t agent.Tool, call agent.Call, live callDecision) {
	now := s.Now()
	shadows, err := s.db.FindShadowRules(ctx, run.OrgID, run.ProjectID, &now)
	if err != nil || len(shadows) == 0 {
		if err != nil {
			s.log.Warn("policy: shadow rules unreadable", "project_id", run.ProjectID, "err", err)
		}
		return
	}
	rules, err := s.db.FindRulesForProject(ctx, run.OrgID, run.ProjectID, true)
	if err != nil {
		return
	}
	var hits []store.ShadowHit
	for i := range shadows {
		sr := &shadows[i]
		d, err := s.evaluateCallWith(ctx, run, t, call.Name, call.Arguments, append(append([]store.Rule(nil), rules...), sr.Rule))
		if err != nil {
			return
		}
		decided := false
		for _, id := range d.ruleIDs {
			decided = decided || id == sr.ID
		}
		if d.verdict.Verdict == live.verdict.Verdict && !decided {
			continue
		}
		hits = append(hits, store.ShadowHit{RuleID: sr.ID, SessionID: run.SessionID, Tool: call.Name,
			Command: truncate(d.view.Rendered.Command, 2000), Actual: string(live.verdict.Verdict), Would: string(d.verdict.Verdict)})
	}
	if err := s.db.RecordShadowHits(ctx, hits); err != nil {
		s.log.Warn("policy: shadow hits not recorded", "project_id", run.ProjectID, "err", err)
	}
}
