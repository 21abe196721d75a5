package server

import (
	"sort"
	"strings"

	"github.com/opsagent/opsagent/store"
)

// Perm names one thing a caller may do in an org. API-key scopes use the same names.
type Perm string

// The permission set. Every route in the table names one of these (or none).
const (
	PermOrgRead       Perm = "org:read"        // see the org, its members and settings
	PermOrgWrite      Perm = "org:write"       // rename, branding
	PermOrgAdmin      Perm = "org:admin"       // members, invitations, API keys
	PermOrgOwner      Perm = "org:owner"       // LLM key, ownership, deletion
	PermProjectRead   Perm = "projects:read"   // see projects
	PermProjectWrite  Perm = "projects:write"  // edit projects
	PermProjectAdmin  Perm = "projects:admin"  // create, archive, delete projects, project members
	PermTasksRead     Perm = "tasks:read"      // see tasks and templates
	PermTasksWrite    Perm = "tasks:write"     // create, edit, delete tasks
	PermTasksRun      Perm = "tasks:run"       // trigger tasks
	PermSessionsRead  Perm = "sessions:read"   // see agent sessions and transcripts
	PermSessionsWrite Perm = "sessions:write"  // chat, resume, cancel
	PermApprovals     Perm = "approvals:write" // approve or deny risky actions
	PermWebhooksRead  Perm = "webhooks:read"   // see webhook config and events
	PermWebhooksWrite Perm = "webhooks:write"  // configure, rotate, replay, purge
	PermKnowledgeRead Perm = "knowledge:read"  // search and read documents and memories
	PermKnowledgeEdit Perm = "knowledge:write" // upload, edit, delete documents and memories
	PermSecretsRead   Perm = "secrets:read"    // list secret names (never values)
	PermSecretsWrite  Perm = "secrets:write"   // create, replace, delete secrets
	PermAuditRead     Perm = "audit:read"      // read and export the audit log
	PermUsageRead     Perm = "usage:read"      // usage, dashboards
	PermRulesWrite    Perm = "rules:write"     // must_always / must_never rules, budgets
)

// Roles in an org. owner is fixed by the spec.
const (
	RoleOwner  = "owner"
	RoleAdmin  = "admin"
	RoleMember = "member"
	RoleViewer = "viewer"
)

// Roles lists the roles from most to least powerful.
var Roles = []string{RoleOwner, RoleAdmin, RoleMember, RoleViewer}

var readPerms = []Perm{PermOrgRead, PermProjectRead, PermTasksRead, PermSessionsRead, PermWebhooksRead,
	PermKnowledgeRead, PermSecretsRead, PermUsageRead}

var memberPerms = append(append([]Perm{}, readPerms...), PermProjectWrite, PermTasksWrite, PermTasksRun,
	PermSessionsWrite, PermApprovals, PermWebhooksWrite, PermKnowledgeEdit)

var adminPerms = append(append([]Perm{}, memberPerms...), PermOrgWrite, PermOrgAdmin, PermProjectAdmin,
	PermSecretsWrite, PermAuditRead, PermRulesWrite)

var ownerPerms = append(append([]Perm{}, adminPerms...), PermOrgOwner)

// roleMatrix is the one place that says what each role may do.
var roleMatrix = map[string]map[Perm]bool{
	RoleOwner:  set(ownerPerms),
	RoleAdmin:  set(adminPerms),
	RoleMember: set(memberPerms),
	RoleViewer: set(readPerms),
}

func set(ps []Perm) map[Perm]bool {
	m := map[Perm]bool{}
	for _, p := range ps {
		m[p] = true
	}
	return m
}

// AllPerms lists every permission, sorted.
func AllPerms() []Perm {
	var out []Perm
	for p := range roleMatrix[RoleOwner] {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// RoleHas reports whether role grants p.
func RoleHas(role string, p Perm) bool { return roleMatrix[role][p] }

// ValidRole reports whether role exists.
func ValidRole(role string) bool { _, ok := roleMatrix[role]; return ok }

// Can reports whether the caller holds p: the role's grant, intersected with
// an API key's declared scopes ("*" meaning everything its creator may do).
func (id *Identity) Can(p Perm) bool {
	if p == "" {
		return true
	}
	if !RoleHas(id.Role, p) {
		return false
	}
	if id.KeyID == "" {
		return true
	}
	for _, s := range id.Scopes {
		if s == "*" || Perm(s) == p {
			return true
		}
	}
	return false
}

// CanProject reports whether an API key's allow-list (if any) admits projectID.
func (id *Identity) CanProject(projectID string) bool {
	if len(id.Projects) == 0 {
		return true
	}
	for _, p := range id.Projects {
		if p == projectID {
			return true
		}
	}
	return false
}

// roleRank orders roles: lower is more powerful.
func roleRank(role string) int {
	for i, r := range Roles {
		if r == role {
			return i
		}
	}
	return len(Roles)
}

// The permission rule, applied to every authenticated request in this order:
// scopeToPathOrg re-binds the caller to the org a path names, authorize
// checks the route's permission against the role (and a key's scopes), and on
// project routes projectFor checks visibility and caps the role by the
// caller's project role. Every denial is audited (onPermissionDenied).

// authorize applies the route's permission to the authenticated caller.
func (s *Server) authorize(c *Ctx) error {
	if err := s.scopeToPathOrg(c); err != nil {
		return err
	}
	if !c.ID.Can(c.Route.Perm) {
		s.onPermissionDenied(c)
		return &store.Error{Code: store.EForbidden, Message: "your role does not allow this (" + string(c.Route.Perm) + ")", Reason: "permission_denied"}
	}
	return nil
}

// onPermissionDenied audits a denial.
func (s *Server) onPermissionDenied(c *Ctx) {
	c.Audit("permission.denied", "denied", "route", c.Route.Method+" "+c.Route.Path, map[string]any{"permission": string(c.Route.Perm)})
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
