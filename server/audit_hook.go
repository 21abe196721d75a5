package server

import "context"

// AuditEvent is one security-relevant fact. The audit log stores it with a
// hash chain; until that feature is installed events only reach the log.
type AuditEvent struct {
	Action      string // task.created, auth.login_failed, member.role_changed, ...
	Outcome     string // success, failure, denied
	OrgID       string
	ProjectID   string
	ActorUserID string
	ActorKeyID  string
	TargetType  string
	TargetID    string
	IP          string
	UserAgent   string
	Detail      map[string]any
}

// audit records e. It never fails the request it describes.
func (s *Server) audit(ctx context.Context, e AuditEvent) {
	if s.hooks.audit != nil {
		s.hooks.audit(ctx, e)
		return
	}
	loggerFrom(ctx).Info("audit", "action", e.Action, "outcome", e.Outcome, "org_id", e.OrgID, "actor", e.ActorUserID+e.ActorKeyID, "target", e.TargetID)
}

// auditFrom fills actor, org, project, IP and user agent from the request.
func (c *Ctx) auditEvent(action, outcome, targetType, targetID string, detail map[string]any) AuditEvent {
	e := AuditEvent{Action: action, Outcome: outcome, TargetType: targetType, TargetID: targetID,
		IP: c.ClientIP(), UserAgent: truncate(c.R.UserAgent(), 256), Detail: detail}
	if c.ID != nil {
		e.ActorUserID, e.ActorKeyID, e.OrgID = c.ID.UserID, c.ID.KeyID, c.ID.OrgID
	}
	if c.Project != nil {
		e.ProjectID = c.Project.ID
	}
	return e
}

// Audit writes an event about this request.
func (c *Ctx) Audit(action, outcome, targetType, targetID string, detail map[string]any) {
	c.srv.audit(c.Context(), c.auditEvent(action, outcome, targetType, targetID, detail))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}
