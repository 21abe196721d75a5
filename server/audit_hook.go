package server

import (
	"context"
	"encoding/json"

	"github.com/opsagent/opsagent/store"
)

// AuditEvent is one security-relevant fact. The audit log stores it with a
// hash chain (server/audit).
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

// audit records e: it stamps the event with the server clock and queues it
// on the audit writer. It never fails the request it describes.
func (s *Server) audit(ctx context.Context, e AuditEvent) {
	markAudited(ctx)
	if e.OrgID == "" && e.ActorUserID != "" {
		// Events before an org is chosen (failed sign-ins, second factors)
		// belong to the user's current org, where its admins will look.
		if u, err := s.db.FindUserByID(ctx, e.ActorUserID); err == nil {
			e.OrgID = u.CurrentOrgID
		}
	}
	if e.OrgID == "" {
		// No tenant to file it under (an unknown address): the log keeps it.
		loggerFrom(ctx).Info("audit", "action", e.Action, "outcome", e.Outcome, "ip", e.IP, "target", e.TargetID)
		return
	}
	detail := "{}"
	if len(e.Detail) > 0 {
		if b, err := json.Marshal(e.Detail); err == nil {
			detail = string(b)
		}
	}
	s.auditLog.Enqueue(&store.AuditRecord{ID: store.NewID(), OrgID: e.OrgID, ProjectID: e.ProjectID, ActorUserID: e.ActorUserID,
		ActorKeyID: e.ActorKeyID, Action: e.Action, Outcome: e.Outcome, TargetType: e.TargetType, TargetID: e.TargetID,
		IP: e.IP, UserAgent: e.UserAgent, Detail: detail, CreatedAt: s.Now()})
}
