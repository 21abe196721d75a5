package server

import (
	"github.com/opsagent/opsagent/server/webhook"
	"github.com/opsagent/opsagent/server/webhook/pipeline"
	"github.com/opsagent/opsagent/store"
)

// WebhookMatchRequest is a routing condition to try on a stored event.
type WebhookMatchRequest struct {
	Condition string `json:"condition" validate:"required,max=1024"`
}

// WebhookMatchOut says whether the condition selects the event; Error is
// set when evaluating it failed on this event (it compiled).
type WebhookMatchOut struct {
	Matched   bool   `json:"matched"`
	Error     string `json:"error,omitempty"`
	EventType string `json:"event_type"`
	Provider  string `json:"provider"`
}

// webhookMatchRoutes: the routing-rule editor's "test against this event".
func (s *Server) webhookMatchRoutes() []*Route {
	return []*Route{
		{Method: "POST", Path: "/api/tasks/{task_id}/webhook/events/{event_id}/match", Summary: "Try a routing condition on a stored event (nothing is dispatched); 409 when its body was not kept",
			Tags: []string{"webhooks"}, Auth: AuthAny, Perm: PermWebhooksRead, Project: true, Body: WebhookMatchRequest{}, Resp: WebhookMatchOut{}, Status: 200, MaxBody: 4 << 10, Handle: s.handleWebhookMatch},
	}
}

// handleWebhookMatch is POST /api/tasks/{task_id}/webhook/events/{event_id}/match.
// It evaluates the condition on the same view of the event the dispatcher
// builds: the parsed event, its stored (redacted) body and headers.
func (s *Server) handleWebhookMatch(c *Ctx) error {
	id, eid, err := c.IDParams("task_id", "event_id")
	if err != nil {
		return err
	}
	var req WebhookMatchRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	cond, err := webhook.CompileCondition(req.Condition)
	if err != nil {
		return invalid(err.Error(), "value_error.condition", "body", "condition")
	}
	e, err := s.db.FindWebhookEvent(c.Context(), c.OrgID(), c.ProjectID(), id, eid)
	if err != nil {
		return err
	}
	out := WebhookMatchOut{EventType: e.Type, Provider: e.Provider}
	if e.Body == nil {
		return &store.Error{Code: store.EConflict, Message: "this event's body was not kept (metadata only or past retention), so conditions cannot be tried on it", Reason: "event_body_gone"}
	}
	headers := pipeline.StoredHeaders(e.Headers)
	ev := webhook.Event{Provider: webhook.Provider(e.Provider), Type: e.Type, Alerts: []webhook.Alert{}}
	if !e.Raw {
		if parsed, err := webhook.Parse(webhook.Provider(e.Provider), headers, e.Body); err == nil {
			ev = parsed
		}
	}
	matched, err := cond.Match(webhook.NewEnv(ev, e.Body, headers))
	out.Matched = matched
	if err != nil {
		out.Error = err.Error()
	}
	return c.JSON(200, out)
}
