package server

import (
	"time"

	"github.com/opsagent/opsagent/server/webhook"
	"github.com/opsagent/opsagent/store"
)

// WebhookRuleCreate is the body of POST /api/tasks/{task_id}/webhook/rules.
type WebhookRuleCreate struct {
	Name             string  `json:"name" validate:"required,min=1,max=120"`
	Priority         *int    `json:"priority" validate:"nonnull,gte=0,lte=10000" doc:"lower runs first; default 100"`
	Condition        string  `json:"condition" validate:"max=1024" doc:"expr-lang expression over alert, alerts, event, provider, payload and headers, e.g. alert.severity == \"critical\"; empty matches every event; compiled on save"`
	TargetTaskID     *string `json:"target_task_id" validate:"nonnull" doc:"task to run: this webhook's task (default) or another task of the project"`
	RequiresApproval bool    `json:"requires_approval" doc:"open an approval instead of running; approving dispatches the event"`
	Enabled          *bool   `json:"enabled" validate:"nonnull" doc:"default true"`
}

// WebhookRuleUpdate is the body of PATCH .../rules/{rule_id}: fields present change.
type WebhookRuleUpdate struct {
	Name             *string `json:"name" validate:"nonnull,min=1,max=120"`
	Priority         *int    `json:"priority" validate:"nonnull,gte=0,lte=10000"`
	Condition        *string `json:"condition" validate:"nonnull,max=1024"`
	TargetTaskID     *string `json:"target_task_id" validate:"nonnull"`
	RequiresApproval *bool   `json:"requires_approval" validate:"nonnull"`
	Enabled          *bool   `json:"enabled" validate:"nonnull"`
}

// WebhookRuleOut is a routing rule.
type WebhookRuleOut struct {
	ID               string    `json:"id"`
	TaskID           string    `json:"task_id"`
	Name             string    `json:"name"`
	Priority         int       `json:"priority"`
	Condition        string    `json:"condition"`
	TargetTaskID     string    `json:"target_task_id"`
	RequiresApproval bool      `json:"requires_approval"`
	Enabled          bool      `json:"enabled"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
}

func webhookRuleOut(r *store.WebhookRule) WebhookRuleOut {
	return WebhookRuleOut{ID: r.ID, TaskID: r.TaskID, Name: r.Name, Priority: r.Priority, Condition: r.Condition,
		TargetTaskID: r.TargetTaskID, RequiresApproval: r.RequiresApproval, Enabled: r.Enabled, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// checkRule compiles the condition and checks the target id's shape; the
// store checks the target belongs to the project.
func checkRule(r *store.WebhookRule) error {
	if r.Condition != "" {
		if _, err := webhook.CompileCondition(r.Condition); err != nil {
			return invalid(err.Error(), "value_error.condition", "body", "condition")
		}
	}
	if !store.ValidID(r.TargetTaskID) {
		return invalid("target_task_id must be a task id of this project", "value_error", "body", "target_task_id")
	}
	return nil
}

func ruleSaveError(err error) error {
	if se, ok := err.(*store.Error); ok && se.Reason == "target_task_not_found" {
		return invalid(se.Message, "value_error", "body", "target_task_id")
	}
	return err
}

// handleListWebhookRules is GET /api/tasks/{task_id}/webhook/rules.
func (s *Server) handleListWebhookRules(c *Ctx) error {
	id, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	if _, err := s.db.FindWebhook(c.Context(), c.OrgID(), c.ProjectID(), id); err != nil {
		return err
	}
	rs, err := s.db.FindWebhookRules(c.Context(), c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	out := make([]WebhookRuleOut, 0, len(rs))
	for i := range rs {
		out = append(out, webhookRuleOut(&rs[i]))
	}
	return c.JSON(200, out)
}

// handleCreateWebhookRule is POST /api/tasks/{task_id}/webhook/rules.
func (s *Server) handleCreateWebhookRule(c *Ctx) error {
	id, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	var req WebhookRuleCreate
	if err := c.Bind(&req); err != nil {
		return err
	}
	r := &store.WebhookRule{OrgID: c.OrgID(), ProjectID: c.ProjectID(), TaskID: id, Name: req.Name, Priority: 100,
		Condition: req.Condition, TargetTaskID: id, RequiresApproval: req.RequiresApproval, Enabled: true}
	setIf(&r.Priority, req.Priority)
	setIf(&r.TargetTaskID, req.TargetTaskID)
	setIf(&r.Enabled, req.Enabled)
	if err := checkRule(r); err != nil {
		return err
	}
	if err := s.db.SaveWebhookRule(c.Context(), r); err != nil {
		return ruleSaveError(err)
	}
	s.wh.Forget(id) // the dispatcher's cached rules
	c.Audit("webhook.rule_created", "success", "webhook_rule", r.ID, map[string]any{"task_id": id, "requires_approval": r.RequiresApproval})
	return c.JSON(201, webhookRuleOut(r))
}

// handleUpdateWebhookRule is PATCH /api/tasks/{task_id}/webhook/rules/{rule_id}.
func (s *Server) handleUpdateWebhookRule(c *Ctx) error {
	id, rid, err := c.IDParams("task_id", "rule_id")
	if err != nil {
		return err
	}
	var req WebhookRuleUpdate
	if err := c.Bind(&req); err != nil {
		return err
	}
	r, err := s.db.FindWebhookRule(c.Context(), c.OrgID(), c.ProjectID(), id, rid)
	if err != nil {
		return err
	}
	setIf(&r.Name, req.Name)
	setIf(&r.Priority, req.Priority)
	setIf(&r.Condition, req.Condition)
	setIf(&r.TargetTaskID, req.TargetTaskID)
	setIf(&r.RequiresApproval, req.RequiresApproval)
	setIf(&r.Enabled, req.Enabled)
	if err := checkRule(r); err != nil {
		return err
	}
	if err := s.db.SaveWebhookRule(c.Context(), r); err != nil {
		return ruleSaveError(err)
	}
	s.wh.Forget(id) // the dispatcher's cached rules
	c.Audit("webhook.rule_updated", "success", "webhook_rule", r.ID, map[string]any{"task_id": id})
	return c.JSON(200, webhookRuleOut(r))
}

// handleDeleteWebhookRule is DELETE /api/tasks/{task_id}/webhook/rules/{rule_id}.
func (s *Server) handleDeleteWebhookRule(c *Ctx) error {
	id, rid, err := c.IDParams("task_id", "rule_id")
	if err != nil {
		return err
	}
	if err := s.db.DeleteWebhookRule(c.Context(), c.OrgID(), c.ProjectID(), id, rid); err != nil {
		return err
	}
	s.wh.Forget(id) // the dispatcher's cached rules
	c.Audit("webhook.rule_deleted", "success", "webhook_rule", rid, map[string]any{"task_id": id})
	return c.NoContent()
}
