package server

import "sort"

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
