package server

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/opsagent/opsagent/store"
)

// installTenancy plugs organizations, project access, API keys and the audit
// log into the request pipeline: every hook lives here so server.New needs
// one call.
func (s *Server) installTenancy() {
	s.auditLog = newAuditWriter(s.db, s.log)
	s.hooks.audit = s.writeAudit
	s.hooks.apiKey = s.authenticateKey
	s.hooks.projectAccess = func(c *Ctx, p *store.Project) error {
		_, err := s.projectFor(c, p.ID)
		return err
	}
	s.hooks.denied = func(c *Ctx) {
		c.Audit("permission.denied", "denied", "route", c.Route.Method+" "+c.Route.Path, map[string]any{"permission": string(c.Route.Perm)})
	}
	s.hooks.orgScope = s.scopeToPathOrg
	for _, rt := range s.routes {
		rt.Handle = s.auditUnsafe(rt, rt.Handle)
	}
}

// scopeToPathOrg makes /api/organizations/{org_id}/... act in the org of the
// path: a person with the role they hold there, a key only in its own org.
// Any other org reads as not found, exactly like a random id.
func (s *Server) scopeToPathOrg(c *Ctx) error {
	if !strings.HasPrefix(c.Route.Path, "/api/organizations/{org_id}") {
		return nil
	}
	orgID, err := c.IDParam("org_id")
	if err != nil {
		return err
	}
	if orgID == c.ID.OrgID {
		return nil
	}
	if !c.ID.Human() {
		return store.NotFound("organization")
	}
	role, err := s.db.FindRole(c.Context(), orgID, c.ID.UserID)
	if err != nil {
		return err
	}
	id := *c.ID
	id.OrgID, id.Role = orgID, role
	c.ID = &id
	return nil
}

// viewer is the caller as the project visibility rule sees them.
func viewer(id *Identity) store.Viewer {
	return store.Viewer{OrgID: id.OrgID, UserID: id.UserID, SeeAll: id.Role == RoleOwner || id.Role == RoleAdmin, Allow: id.Projects}
}

// projectFor returns a project of the caller's org that the caller may see
// (visibility, a key's allow-list), and caps the caller's role inside it by
// their explicit project role, re-checking the route's permission against
// the capped role. Invisible projects are 404; a capped role is 403.
func (s *Server) projectFor(c *Ctx, projectID string) (*store.Project, error) {
	if !store.ValidID(projectID) || !c.ID.CanProject(projectID) {
		return nil, store.NotFound("project")
	}
	v := viewer(c.ID)
	p, prole, err := s.db.FindVisibleProject(c.Context(), v, projectID)
	if err != nil {
		return nil, err
	}
	if prole != "" && !v.SeeAll && roleRank(prole) > roleRank(c.ID.Role) {
		id := *c.ID
		id.Role = prole
		c.ID = &id
		if !id.Can(c.Route.Perm) {
			s.onPermissionDenied(c)
			return nil, &store.Error{Code: store.EForbidden, Message: "your role in this project does not allow this (" + string(c.Route.Perm) + ")", Reason: "permission_denied"}
		}
	}
	return p, nil
}

type auditMarkKey struct{}

// auditUnsafe wraps a handler so that every successful state-changing request
// of an authenticated caller leaves an audit event: the handler's own specific
// event when it wrote one, else a generic one named after the route.
func (s *Server) auditUnsafe(rt *Route, h func(*Ctx) error) func(*Ctx) error {
	if rt.Method == http.MethodGet || rt.Method == http.MethodHead || rt.Method == http.MethodOptions {
		return h
	}
	return func(c *Ctx) error {
		mark := new(atomic.Bool)
		c.R = c.R.WithContext(context.WithValue(c.Context(), auditMarkKey{}, mark))
		err := h(c)
		if err != nil || c.ID == nil || mark.Load() {
			return err
		}
		status := 0
		if rec, ok := c.W.(*statusRecorder); ok {
			status = rec.status
		}
		if status >= 200 && status < 300 {
			targetType, targetID := "", ""
			for _, seg := range strings.Split(rt.Path, "/") {
				if isParam(seg) {
					name := seg[1 : len(seg)-1]
					targetType, targetID = humanName(name), c.Param(name)
				}
			}
			c.Audit("request."+strings.ToLower(rt.Method)+" "+rt.Path, "success", targetType, targetID, nil)
		}
		return nil
	}
}

// markAudited notes that the request wrote its own specific audit event.
func markAudited(ctx context.Context) {
	if m, ok := ctx.Value(auditMarkKey{}).(*atomic.Bool); ok {
		m.Store(true)
	}
}
