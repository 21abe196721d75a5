package server_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/store"
)

// ids are the identifiers a probe plugs in: the other tenant's real ones, or
// fresh random ones. A leak is any answer to the first that differs from the
// answer to the second (or a success on a route addressed by id).
type ids struct {
	org, project, user, invitation, key, session, task, mfa, memory, agentSession string
	rule, orgRule, integration, connector                                         string
	// A webhook on task, with an event, a routing rule, the approval the
	// rule opened and the incident the alert opened.
	event, whRule, approval, incident string
}

// own are the caller's ids, for probes that put a foreign id in the body or
// query of an otherwise legitimate request.
type own struct{ org, project string }

type probeReq struct {
	method, path string
	body         any
	project      string // X-Project-ID
}

// probe builds the requests that try foreign ids on one route.
type probe func(o own, x ids) []probeReq

func one(method, path string, body any) []probeReq {
	return []probeReq{{method: method, path: path, body: body}}
}

// isolationProbes has one entry per route that takes an id (path, query,
// body or X-Project-ID). A new such route without an entry fails the sweep.
// exempt entries say why the route holds no tenant data.
var isolationProbes = map[string]probe{
	"DELETE /api/auth/sessions/{session_id}": func(o own, x ids) []probeReq { return one("DELETE", "/api/auth/sessions/"+x.session, nil) },
	"GET /api/users/{user_id}/avatar":        func(o own, x ids) []probeReq { return one("GET", "/api/users/"+x.user+"/avatar", nil) },
	"POST /api/auth/switch-org/{org_id}":     func(o own, x ids) []probeReq { return one("POST", "/api/auth/switch-org/"+x.org, nil) },
	"GET /api/organizations/{org_id}":        func(o own, x ids) []probeReq { return one("GET", "/api/organizations/"+x.org, nil) },
	"PATCH /api/organizations/{org_id}": func(o own, x ids) []probeReq {
		return one("PATCH", "/api/organizations/"+x.org, map[string]any{"name": "pwned"})
	},
	"PATCH /api/organizations/{org_id}/branding": func(o own, x ids) []probeReq {
		return one("PATCH", "/api/organizations/"+x.org+"/branding", map[string]any{"display_name": "pwned"})
	},
	"DELETE /api/organizations/{org_id}/llm-key": func(o own, x ids) []probeReq { return one("DELETE", "/api/organizations/"+x.org+"/llm-key", nil) },
	"GET /api/organizations/{org_id}/members":    func(o own, x ids) []probeReq { return one("GET", "/api/organizations/"+x.org+"/members", nil) },
	"PATCH /api/organizations/{org_id}/members/{user_id}": func(o own, x ids) []probeReq {
		b := map[string]any{"role": "viewer"}
		return []probeReq{{method: "PATCH", path: "/api/organizations/" + x.org + "/members/" + x.user, body: b},
			{method: "PATCH", path: "/api/organizations/" + o.org + "/members/" + x.user, body: b}}
	},
	"DELETE /api/organizations/{org_id}/members/{user_id}": func(o own, x ids) []probeReq {
		return []probeReq{{method: "DELETE", path: "/api/organizations/" + x.org + "/members/" + x.user},
			{method: "DELETE", path: "/api/organizations/" + o.org + "/members/" + x.user}}
	},
	"POST /api/organizations/{org_id}/leave": func(o own, x ids) []probeReq { return one("POST", "/api/organizations/"+x.org+"/leave", nil) },
	"POST /api/organizations/{org_id}/invitations": func(o own, x ids) []probeReq {
		return one("POST", "/api/organizations/"+x.org+"/invitations", map[string]any{"email": "mole@example.com", "role": "owner"})
	},
	"GET /api/organizations/{org_id}/invitations": func(o own, x ids) []probeReq { return one("GET", "/api/organizations/"+x.org+"/invitations", nil) },
	"GET /api/organizations/{org_id}/retention":   func(o own, x ids) []probeReq { return one("GET", "/api/organizations/"+x.org+"/retention", nil) },
	"PUT /api/organizations/{org_id}/retention": func(o own, x ids) []probeReq {
		return one("PUT", "/api/organizations/"+x.org+"/retention", map[string]any{"audit_days": 1})
	},
	"DELETE /api/organizations/{org_id}/invitations/{invitation_id}": func(o own, x ids) []probeReq {
		return []probeReq{{method: "DELETE", path: "/api/organizations/" + x.org + "/invitations/" + x.invitation},
			{method: "DELETE", path: "/api/organizations/" + o.org + "/invitations/" + x.invitation}}
	},
	"GET /api/projects/current": func(o own, x ids) []probeReq {
		return []probeReq{{method: "GET", path: "/api/projects/current", project: x.project}}
	},
	"GET /api/projects/{project_id}": func(o own, x ids) []probeReq { return one("GET", "/api/projects/"+x.project, nil) },
	"PATCH /api/projects/{project_id}": func(o own, x ids) []probeReq {
		return one("PATCH", "/api/projects/"+x.project, map[string]any{"name": "pwned"})
	},
	"DELETE /api/projects/{project_id}":            func(o own, x ids) []probeReq { return one("DELETE", "/api/projects/"+x.project, nil) },
	"GET /api/projects/{project_id}/feature-flags": func(o own, x ids) []probeReq { return one("GET", "/api/projects/"+x.project+"/feature-flags", nil) },
	"GET /api/projects/{project_id}/members":       func(o own, x ids) []probeReq { return one("GET", "/api/projects/"+x.project+"/members", nil) },
	"POST /api/projects/{project_id}/members": func(o own, x ids) []probeReq {
		return []probeReq{{method: "POST", path: "/api/projects/" + x.project + "/members", body: map[string]any{"user_id": x.user, "role": "viewer"}},
			{method: "POST", path: "/api/projects/" + o.project + "/members", body: map[string]any{"user_id": x.user, "role": "viewer"}}}
	},
	"PATCH /api/projects/{project_id}/members/{user_id}": func(o own, x ids) []probeReq {
		b := map[string]any{"role": "viewer"}
		return []probeReq{{method: "PATCH", path: "/api/projects/" + x.project + "/members/" + x.user, body: b},
			{method: "PATCH", path: "/api/projects/" + o.project + "/members/" + x.user, body: b}}
	},
	"DELETE /api/projects/{project_id}/members/{user_id}": func(o own, x ids) []probeReq {
		return []probeReq{{method: "DELETE", path: "/api/projects/" + x.project + "/members/" + x.user},
			{method: "DELETE", path: "/api/projects/" + o.project + "/members/" + x.user}}
	},
	"POST /api/api-keys": func(o own, x ids) []probeReq {
		return one("POST", "/api/api-keys", map[string]any{"name": "mole", "scopes": []string{"*"}, "projects": []string{x.project}})
	},
	"DELETE /api/api-keys/{key_id}": func(o own, x ids) []probeReq { return one("DELETE", "/api/api-keys/"+x.key, nil) },
	"GET /api/audit-logs": func(o own, x ids) []probeReq {
		return []probeReq{{method: "GET", path: "/api/audit-logs?target_id=" + x.project}, {method: "GET", path: "/api/audit-logs?actor=" + x.user}}
	},
	"GET /api/audit-logs/export": func(o own, x ids) []probeReq {
		return []probeReq{{method: "GET", path: "/api/audit-logs/export?format=jsonl&target_id=" + x.org}, {method: "GET", path: "/api/audit-logs/export?format=csv&actor=" + x.user}}
	},
	"DELETE /api/auth/mfa/{method_id}": func(o own, x ids) []probeReq { return one("DELETE", "/api/auth/mfa/"+x.mfa, nil) },
	// The device flow's client_id and device_code are not tenant ids: the
	// grant is bound to whoever redeems it.
	"POST /api/auth/device-code":  nil,
	"POST /api/auth/device-token": nil,
	"GET /api/tasks/stats":        func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/tasks/stats", nil) },
	"GET /api/tasks":              func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/tasks", nil) },
	"POST /api/tasks": func(o own, x ids) []probeReq {
		return inProject(x, "POST", "/api/tasks", map[string]any{"name": "mole", "prompt": "p"})
	},
	"POST /api/tasks/bulk-delete": func(o own, x ids) []probeReq {
		b := map[string]any{"ids": []string{x.task}}
		return []probeReq{{method: "POST", path: "/api/tasks/bulk-delete", body: b, project: o.project},
			{method: "POST", path: "/api/tasks/bulk-delete", body: b, project: x.project}}
	},
	"POST /api/tasks/preview": func(o own, x ids) []probeReq {
		return inProject(x, "POST", "/api/tasks/preview", map[string]any{"name": "mole", "prompt": "p", "schedule": "@daily"})
	},
	"GET /api/tasks/{task_id}":          func(o own, x ids) []probeReq { return taskProbe(o, x, "GET", "", nil) },
	"PATCH /api/tasks/{task_id}":        func(o own, x ids) []probeReq { return taskProbe(o, x, "PATCH", "", map[string]any{"name": "pwned"}) },
	"DELETE /api/tasks/{task_id}":       func(o own, x ids) []probeReq { return taskProbe(o, x, "DELETE", "", nil) },
	"GET /api/tasks/{task_id}/preview":  func(o own, x ids) []probeReq { return taskProbe(o, x, "GET", "/preview", nil) },
	"POST /api/tasks/{task_id}/clone":   func(o own, x ids) []probeReq { return taskProbe(o, x, "POST", "/clone", nil) },
	"POST /api/tasks/{task_id}/trigger": func(o own, x ids) []probeReq { return taskProbe(o, x, "POST", "/trigger", nil) },
	"GET /api/knowledge/documents":      func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/knowledge/documents", nil) },
	"POST /api/knowledge/documents": func(o own, x ids) []probeReq {
		return inProject(x, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": "mole.md", "content": "# x"})
	},
	"GET /api/knowledge/documents/by-name": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "GET", "/api/knowledge/documents/by-name?collection=runbooks&name=bravo-disk.md", nil)
	},
	"PUT /api/knowledge/documents/by-name": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "PUT", "/api/knowledge/documents/by-name?collection=runbooks&name=bravo-disk.md", map[string]any{"content": "pwned"})
	},
	"DELETE /api/knowledge/documents/by-name": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "DELETE", "/api/knowledge/documents/by-name?collection=runbooks&name=bravo-disk.md", nil)
	},
	"GET /api/knowledge/search": func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/knowledge/search?q=disk", nil) },
	"GET /api/memories":         func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/memories", nil) },
	"POST /api/memories": func(o own, x ids) []probeReq {
		return inProject(x, "POST", "/api/memories", map[string]any{"key": "mole", "text": "t"})
	},
	"GET /api/memories/{memory_id}": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "GET", "/api/memories/"+x.memory, nil)
	},
	"PATCH /api/memories/{memory_id}": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "PATCH", "/api/memories/"+x.memory, map[string]any{"text": "pwned"})
	},
	"DELETE /api/memories/{memory_id}": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "DELETE", "/api/memories/"+x.memory, nil)
	},
	"GET /api/secrets": func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/secrets", nil) },
	"GET /api/secrets/{name}": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "GET", "/api/secrets/BRAVO_TOKEN", nil)
	},
	"PUT /api/secrets/{name}": func(o own, x ids) []probeReq {
		// Names are per project: in the caller's own project this is a legitimate upsert.
		return inProject(x, "PUT", "/api/secrets/BRAVO_TOKEN", map[string]any{"value": "pwned-value"})
	},
	"DELETE /api/secrets/{name}": func(o own, x ids) []probeReq {
		return inProject(x, "DELETE", "/api/secrets/BRAVO_TOKEN", nil)
	},
	// Org secrets live in the caller's current org: bravo's names must not show through.
	"GET /api/org-secrets/{name}": func(o own, x ids) []probeReq { return one("GET", "/api/org-secrets/BRAVO_ORG_TOKEN", nil) },
	"PUT /api/org-secrets/{name}": nil, // creates in the caller's own org; tested in secrets_test.go
	"DELETE /api/org-secrets/{name}": func(o own, x ids) []probeReq {
		return one("DELETE", "/api/org-secrets/BRAVO_ORG_TOKEN", nil)
	},
	"GET /api/organizations/{org_id}/llm-key": func(o own, x ids) []probeReq { return one("GET", "/api/organizations/"+x.org+"/llm-key", nil) },
	"PUT /api/organizations/{org_id}/llm-key": func(o own, x ids) []probeReq {
		return one("PUT", "/api/organizations/"+x.org+"/llm-key", map[string]any{"provider": "openai", "api_key": "sk-pwned-123456"})
	},
	"GET /api/rules": func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/rules", nil) },
	"POST /api/rules": func(o own, x ids) []probeReq {
		return inProject(x, "POST", "/api/rules", map[string]any{"kind": "must_always", "description": "mole"})
	},
	"POST /api/rules/evaluate": func(o own, x ids) []probeReq {
		return inProject(x, "POST", "/api/rules/evaluate", map[string]any{"tool": "run_command", "arguments": map[string]any{"command": "rm -rf /srv"}})
	},
	"GET /api/rules/{rule_id}": func(o own, x ids) []probeReq { return bothProjects(o, x, "GET", "/api/rules/"+x.rule, nil) },
	"PATCH /api/rules/{rule_id}": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "PATCH", "/api/rules/"+x.rule, map[string]any{"enabled": false})
	},
	"DELETE /api/rules/{rule_id}":  func(o own, x ids) []probeReq { return bothProjects(o, x, "DELETE", "/api/rules/"+x.rule, nil) },
	"GET /api/org-rules/{rule_id}": func(o own, x ids) []probeReq { return one("GET", "/api/org-rules/"+x.orgRule, nil) },
	"PATCH /api/org-rules/{rule_id}": func(o own, x ids) []probeReq {
		return one("PATCH", "/api/org-rules/"+x.orgRule, map[string]any{"enabled": false})
	},
	"DELETE /api/org-rules/{rule_id}": func(o own, x ids) []probeReq { return one("DELETE", "/api/org-rules/"+x.orgRule, nil) },
	"GET /api/budget":                 func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/budget", nil) },
	"GET /api/command-policy":         func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/command-policy", nil) },
	"PUT /api/command-policy": func(o own, x ids) []probeReq {
		return inProject(x, "PUT", "/api/command-policy", map[string]any{"auto_allow_read_only": true})
	},
	"PUT /api/budget": func(o own, x ids) []probeReq {
		return inProject(x, "PUT", "/api/budget", map[string]any{"daily_cost_usd": 0})
	},
	"GET /api/integrations": func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/integrations", nil) },
	"POST /api/integrations": func(o own, x ids) []probeReq {
		return inProject(x, "POST", "/api/integrations", map[string]any{"kind": "prometheus", "name": "mole", "base_url": "http://10.0.0.1:9090"})
	},
	"GET /api/integrations/{integration_id}": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "GET", "/api/integrations/"+x.integration, nil)
	},
	"PATCH /api/integrations/{integration_id}": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "PATCH", "/api/integrations/"+x.integration, map[string]any{"base_url": "http://10.6.6.6"})
	},
	"POST /api/integrations/{integration_id}/test": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "POST", "/api/integrations/"+x.integration+"/test", nil)
	},
	"DELETE /api/integrations/{integration_id}": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "DELETE", "/api/integrations/"+x.integration, nil)
	},
	"GET /api/connectors": func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/connectors", nil) },
	"POST /api/connectors": func(o own, x ids) []probeReq {
		return inProject(x, "POST", "/api/connectors", map[string]any{"name": "mole"})
	},
	"GET /api/connectors/{connector_id}": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "GET", "/api/connectors/"+x.connector, nil)
	},
	"PATCH /api/connectors/{connector_id}": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "PATCH", "/api/connectors/"+x.connector, map[string]any{"allow_list": []string{"**"}})
	},
	"POST /api/connectors/{connector_id}/rotate-token": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "POST", "/api/connectors/"+x.connector+"/rotate-token", nil)
	},
	"POST /api/connectors/{connector_id}/revoke": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "POST", "/api/connectors/"+x.connector+"/revoke", nil)
	},
	"DELETE /api/connectors/{connector_id}": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "DELETE", "/api/connectors/"+x.connector, nil)
	},
	"POST /api/commands": func(o own, x ids) []probeReq {
		return append(inProject(x, "POST", "/api/commands", map[string]any{"target": "db-1", "command": "uptime"}),
			probeReq{method: "POST", path: "/api/commands", project: o.project,
				body: map[string]any{"target": "db-1", "command": "uptime", "approval_id": x.approval}})
	},
	"GET /api/connector-settings": func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/connector-settings", nil) },
	"PUT /api/connector-settings": func(o own, x ids) []probeReq {
		return inProject(x, "PUT", "/api/connector-settings", map[string]any{"command_timeout_max_seconds": 1})
	},
	"GET /api/http-allowlist": func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/http-allowlist", nil) },
	"PUT /api/http-allowlist": func(o own, x ids) []probeReq {
		return inProject(x, "PUT", "/api/http-allowlist", map[string]any{"entries": []string{"10.0.0.0/8"}})
	},
	// Webhooks: the receiver has no tenant: the task id is the webhook's
	// public address and its secret the credential, so bravo's live webhook
	// answers 401 to an unsigned delivery where a random id answers 404.
	// TestWebhookBadInput shows a task without an enabled webhook reads like
	// an unknown id. Management routes are addressed by task like the task
	// routes, and are probed below with bravo's real webhook, event and rule.
	"POST /api/webhooks/{task_id}": nil,
	// The badge token is a random capability, not a tenant id.
	"GET /api/webhook-badges/{badge_token}": nil,
	"GET /api/tasks/{task_id}/webhook":      func(o own, x ids) []probeReq { return taskProbe(o, x, "GET", "/webhook", nil) },
	"PUT /api/tasks/{task_id}/webhook": func(o own, x ids) []probeReq {
		return taskProbe(o, x, "PUT", "/webhook", map[string]any{"provider": "generic"})
	},
	"DELETE /api/tasks/{task_id}/webhook": func(o own, x ids) []probeReq { return taskProbe(o, x, "DELETE", "/webhook", nil) },
	"POST /api/tasks/{task_id}/webhook/rotate-secret": func(o own, x ids) []probeReq {
		return taskProbe(o, x, "POST", "/webhook/rotate-secret", map[string]any{})
	},
	"POST /api/tasks/{task_id}/webhook/test":     func(o own, x ids) []probeReq { return taskProbe(o, x, "POST", "/webhook/test", nil) },
	"GET /api/tasks/{task_id}/webhook/events":    func(o own, x ids) []probeReq { return taskProbe(o, x, "GET", "/webhook/events", nil) },
	"DELETE /api/tasks/{task_id}/webhook/events": func(o own, x ids) []probeReq { return taskProbe(o, x, "DELETE", "/webhook/events", nil) },
	"POST /api/tasks/{task_id}/webhook/events/replay": func(o own, x ids) []probeReq {
		return taskProbe(o, x, "POST", "/webhook/events/replay", map[string]any{"event_ids": []string{x.event}})
	},
	"GET /api/tasks/{task_id}/webhook/events/{event_id}": func(o own, x ids) []probeReq { return taskProbe(o, x, "GET", "/webhook/events/"+x.event, nil) },
	"POST /api/tasks/{task_id}/webhook/events/{event_id}/match": func(o own, x ids) []probeReq {
		return taskProbe(o, x, "POST", "/webhook/events/"+x.event+"/match", map[string]any{"condition": "true"})
	},
	"POST /api/tasks/{task_id}/webhook/events/{event_id}/replay": func(o own, x ids) []probeReq {
		return taskProbe(o, x, "POST", "/webhook/events/"+x.event+"/replay", nil)
	},
	"GET /api/tasks/{task_id}/webhook/rules": func(o own, x ids) []probeReq { return taskProbe(o, x, "GET", "/webhook/rules", nil) },
	"POST /api/tasks/{task_id}/webhook/rules": func(o own, x ids) []probeReq {
		return taskProbe(o, x, "POST", "/webhook/rules", map[string]any{"name": "mole", "target_task_id": x.task})
	},
	"PATCH /api/tasks/{task_id}/webhook/rules/{rule_id}": func(o own, x ids) []probeReq {
		return taskProbe(o, x, "PATCH", "/webhook/rules/"+x.whRule, map[string]any{"name": "pwned"})
	},
	"DELETE /api/tasks/{task_id}/webhook/rules/{rule_id}": func(o own, x ids) []probeReq { return taskProbe(o, x, "DELETE", "/webhook/rules/"+x.whRule, nil) },
	"GET /api/approvals": func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/approvals", nil) },
	"GET /api/approvals/{approval_id}": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "GET", "/api/approvals/"+x.approval, nil)
	},
	"POST /api/approvals/{approval_id}/approve": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "POST", "/api/approvals/"+x.approval+"/approve", map[string]any{})
	},
	"POST /api/approvals/{approval_id}/approve-and-remember": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "POST", "/api/approvals/"+x.approval+"/approve-and-remember", map[string]any{})
	},
	"POST /api/approvals/{approval_id}/deny": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "POST", "/api/approvals/"+x.approval+"/deny", map[string]any{"comment": "no"})
	},
	"GET /api/incidents": func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/incidents", nil) },
	"GET /api/incidents/{incident_id}": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "GET", "/api/incidents/"+x.incident, nil)
	},
	"POST /api/incidents/{incident_id}/acknowledge": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "POST", "/api/incidents/"+x.incident+"/acknowledge", nil)
	},
	"POST /api/incidents/{incident_id}/resolve": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "POST", "/api/incidents/"+x.incident+"/resolve", map[string]any{})
	},
	"POST /api/incidents/{incident_id}/notes": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "POST", "/api/incidents/"+x.incident+"/notes", map[string]any{"text": "hi"})
	},
	"GET /api/sessions": func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/sessions?q=x", nil) },
	"GET /api/sessions/index": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "GET", "/api/sessions/index?q="+x.agentSession, nil)
	},
	"GET /api/sessions/detail/{session_id}": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "GET", "/api/sessions/detail/"+x.agentSession, nil)
	},
	"GET /api/sessions/{session_id}/transcript": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "GET", "/api/sessions/"+x.agentSession+"/transcript", nil)
	},
	"GET /api/sessions/{session_id}/events": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "GET", "/api/sessions/"+x.agentSession+"/events", nil)
	},
	"POST /api/sessions/{session_ref}/resume": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "POST", "/api/sessions/"+x.agentSession+"/resume", map[string]any{"prompt": "continue"})
	},
	"POST /api/sessions/{session_id}/cancel": func(o own, x ids) []probeReq {
		return bothProjects(o, x, "POST", "/api/sessions/"+x.agentSession+"/cancel", nil)
	},
	"POST /api/chat": func(o own, x ids) []probeReq {
		return append(bothProjects(o, x, "POST", "/api/chat", map[string]any{"message": "hi", "session_id": x.agentSession}),
			inProject(x, "POST", "/api/chat", map[string]any{"message": "hi"})...)
	},
	"GET /api/usage/summary":       func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/usage/summary", nil) },
	"GET /api/usage/trend":         func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/usage/trend", nil) },
	"GET /api/usage/by-agent":      func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/usage/by-agent", nil) },
	"GET /api/usage/by-task":       func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/usage/by-task", nil) },
	"GET /api/usage/top-sessions":  func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/usage/top-sessions", nil) },
	"GET /api/dashboard/stats":     func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/dashboard/stats", nil) },
	"GET /api/dashboard/resources": func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/dashboard/resources", nil) },
	"GET /api/dashboard/agent-funnel": func(o own, x ids) []probeReq {
		return inProject(x, "GET", "/api/dashboard/agent-funnel", nil)
	},
	// MCP mounts: the project in the path resolves like X-Project-ID (tool
	// calls inside a mount are REST requests and meet the probes above).
	"POST /api/mcp/{project_id}": func(o own, x ids) []probeReq {
		return one("POST", "/api/mcp/"+x.project, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
			"params": map[string]any{"name": "list_tasks", "arguments": map[string]any{}}})
	},
	"POST /api/mcp/{project_id}/_rest": func(o own, x ids) []probeReq {
		return one("POST", "/api/mcp/"+x.project+"/_rest", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
			"params": map[string]any{"name": "get_tasks_task_id", "arguments": map[string]any{"task_id": x.task}}})
	},
	// Per-user data addressed by the caller's own key name: no tenant id.
	"GET /api/me/preferences/{key}":    nil,
	"PUT /api/me/preferences/{key}":    nil,
	"DELETE /api/me/preferences/{key}": nil,
}

var idListNames = map[string]bool{"projects": true, "actor": true}

// takesIDs reports whether a route reads an id from its path, X-Project-ID,
// its query or its body (fields named *_id, *_ids, or id lists such as projects).
func takesIDs(rt *server.Route) bool {
	if strings.Contains(rt.Path, "{") || rt.Project {
		return true
	}
	idField := func(t reflect.Type, tag string) bool {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return false
		}
		for i := 0; i < t.NumField(); i++ {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get(tag), ",")
			if strings.HasSuffix(name, "_id") || strings.HasSuffix(name, "_ids") || idListNames[name] {
				return true
			}
		}
		return false
	}
	return (rt.Query != nil && idField(reflect.TypeOf(rt.Query), "query")) || (rt.Body != nil && idField(reflect.TypeOf(rt.Body), "json"))
}

// The isolation sweep: every id-taking route, tried with the other tenant's
// real ids by every role and by API keys, answers exactly as it does for a
// random id, never with success on an id-addressed route, and leaves the
// other tenant's data untouched.
func TestIsolationSweep(t *testing.T) { isolationSweep(t, newEnv(t, openSignup)) }

// isolationSweep runs the sweep against env (one server, or a cluster behind
// a proxy: pg_cluster_proxy_test.go).
func isolationSweep(t *testing.T, env *testEnv) {
	a := env.newTenant(t, "alpha")
	b := env.newTenant(t, "bravo")

	// Bravo's real ids, one of each kind.
	bUser := userID(t, b.byRole["member"])
	bInv := b.owner.must(201, "POST", "/api/organizations/"+b.org+"/invitations", map[string]any{"email": "pending@example.com", "role": "member"}).JSON()["id"].(string)
	bKey, bKeyRow := env.apiKey(t, b.owner, map[string]any{"name": "bravo-ci", "scopes": []string{"*"}})
	b.owner.must(201, "POST", "/api/projects/"+b.project+"/members", map[string]any{"user_id": bUser, "role": "member"})
	bSession := b.owner.must(200, "GET", "/api/auth/sessions", nil).List()[0]["id"].(string)
	bOwner := b.owner
	bOwner.Project = b.project
	bTask := bOwner.must(201, "POST", "/api/tasks", map[string]any{"name": "nightly", "prompt": "check disks", "schedule": "@daily"}).JSON()["id"].(string)
	bOwner.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": "bravo-disk.md", "content": "# Disk\nclean /var/log"})
	bMemory := bOwner.must(201, "POST", "/api/memories", map[string]any{"key": "db.primary", "text": "db1 is primary"}).JSON()["id"].(string)
	bOwner.must(200, "PUT", "/api/secrets/BRAVO_TOKEN", map[string]any{"value": "bravo-secret-value"})
	bOwner.must(200, "PUT", "/api/org-secrets/BRAVO_ORG_TOKEN", map[string]any{"value": "bravo-org-secret"})
	// An agent session: without an LLM the chat fails fast, but the session is kept.
	bAgentSession := bOwner.must(200, "POST", "/api/chat", map[string]any{"message": "check disks", "name": "bravo-chat"}).Header.Get("X-Session-ID")
	if !store.ValidID(bAgentSession) {
		t.Fatalf("chat did not name its session: %q", bAgentSession)
	}
	bRule := bOwner.must(201, "POST", "/api/rules", map[string]any{"kind": "must_never", "description": "no rm", "tool": "run_command", "match_type": "glob", "pattern": "rm *"}).JSON()["id"].(string)
	bIntegration := bOwner.must(201, "POST", "/api/integrations", map[string]any{"kind": "prometheus", "name": "main", "base_url": "http://10.0.0.5:9090"}).JSON()["id"].(string)
	bConnector := bOwner.must(201, "POST", "/api/connectors", map[string]any{"name": "db-1"}).JSON()["id"].(string)
	bHook := bravoWebhook(t, env, bOwner, bTask)
	bOwner.Project = ""
	bOrgRule := bOwner.must(201, "POST", "/api/org-rules", map[string]any{"kind": "must_always", "description": "link the runbook"}).JSON()["id"].(string)
	bMember := b.byRole["member"]
	enrolTOTP(t, env, bMember)
	bMFA := bMember.must(200, "GET", "/api/auth/mfa/methods", nil).List()[0]["id"].(string)
	real := ids{org: b.org, project: b.project, user: bUser, invitation: bInv, key: bKeyRow["id"].(string), session: bSession, task: bTask, mfa: bMFA, memory: bMemory,
		agentSession: bAgentSession, rule: bRule, orgRule: bOrgRule, integration: bIntegration, connector: bConnector,
		event: bHook.event, whRule: bHook.rule, approval: bHook.approval, incident: bHook.incident}
	random := func() ids {
		return ids{org: store.NewID(), project: store.NewID(), user: store.NewID(), invitation: store.NewID(), key: store.NewID(),
			session: store.NewID(), task: store.NewID(), mfa: store.NewID(), memory: store.NewID(), agentSession: store.NewID(),
			rule: store.NewID(), orgRule: store.NewID(), integration: store.NewID(), connector: store.NewID(),
			event: store.NewID(), whRule: store.NewID(), approval: store.NewID(), incident: store.NewID()}
	}

	callers := map[string]*client{}
	for role, c := range a.byRole {
		callers[role] = c
	}
	callers["key:*"], _ = env.apiKey(t, a.owner, map[string]any{"name": "all", "scopes": []string{"*"}})
	callers["key:scoped"], _ = env.apiKey(t, a.owner, map[string]any{"name": "scoped", "scopes": []string{"projects:read", "projects:admin", "projects:write", "org:read", "audit:read"}, "projects": []string{a.project}})
	o := own{org: a.org, project: a.project}

	seen := map[string]bool{}
	probed := 0
	for _, rt := range env.Srv.Routes() {
		name := rt.Method + " " + rt.Path
		seen[name] = true
		if !takesIDs(rt) {
			continue
		}
		p, ok := isolationProbes[name]
		if !ok {
			t.Errorf("route %s takes an id but has no isolation probe: add one to isolationProbes", name)
			continue
		}
		if p == nil {
			continue
		}
		for who, c := range callers {
			ctrlIDs := random()
			reqs, ctrl := p(o, real), p(o, ctrlIDs)
			for i, rq := range reqs {
				got := send(c, rq)
				want := send(c, ctrl[i])
				probed++
				// Ids echoed back (bulk results list what was not found) are
				// compared as placeholders.
				gotBody, wantBody := got.Body, want.Body
				gotBody = maskIDs(gotBody, real)
				wantBody = maskIDs(wantBody, ctrlIDs)
				byID := rq.project == real.project || pathHasID(rq.path, real)
				if got.Status != want.Status || !bytes.Equal(gotBody, wantBody) {
					t.Errorf("LEAK %s as %s: %s %s answered %d %s; a random id answers %d %s", name, who, rq.method, rq.path, got.Status, got.Body, want.Status, want.Body)
				}
				if byID && got.Status < 300 {
					t.Errorf("LEAK %s as %s: %s %s succeeded (%d) with a foreign id", name, who, rq.method, rq.path, got.Status)
				}
			}
		}
	}
	for name := range isolationProbes {
		if !seen[name] {
			t.Errorf("isolation probe for %s names no route; remove or rename it", name)
		}
	}
	t.Logf("%d foreign-id requests, every one answered like a random id", probed)

	// Bravo is untouched.
	c := b.owner
	if n := c.must(200, "GET", "/api/organizations/"+b.org, nil).JSON()["name"]; n == "pwned" {
		t.Fatal("bravo renamed")
	}
	if p := c.must(200, "GET", "/api/projects/"+b.project, nil).JSON(); p["name"] == "pwned" {
		t.Fatal("bravo project renamed")
	}
	if ms := c.must(200, "GET", "/api/organizations/"+b.org+"/members", nil).List(); len(ms) != 4 {
		t.Fatalf("bravo members: %v", ms)
	}
	if ms := c.must(200, "GET", "/api/projects/"+b.project+"/members", nil).List(); len(ms) != 1 {
		t.Fatalf("bravo project members: %v", ms)
	}
	for _, inv := range c.must(200, "GET", "/api/organizations/"+b.org+"/invitations", nil).List() {
		if inv["id"] == bInv && inv["status"] != "pending" {
			t.Fatalf("bravo invitation: %v", inv)
		}
	}
	bKey.must(200, "GET", "/api/auth/me", nil)
	c.Project = b.project
	if got := c.must(200, "GET", "/api/tasks/"+bTask, nil).JSON()["name"]; got != "nightly" {
		t.Fatalf("bravo task changed: name %v", got)
	}
	bHook.untouched(t, c)
	c.Project = ""
	c.must(200, "GET", "/api/auth/sessions", nil)
}

// idList lists every id of x.
func idList(x ids) []string {
	return []string{x.org, x.project, x.user, x.invitation, x.key, x.session, x.task, x.mfa, x.memory, x.agentSession,
		x.rule, x.orgRule, x.integration, x.connector, x.event, x.whRule, x.approval, x.incident}
}

// maskIDs replaces the probe's ids in a body with a placeholder.
func maskIDs(b []byte, x ids) []byte {
	for _, id := range idList(x) {
		b = bytes.ReplaceAll(b, []byte(id), []byte("<id>"))
	}
	return b
}

// pathHasID reports whether the request path addresses one of x's ids.
func pathHasID(path string, x ids) bool {
	path, _, _ = strings.Cut(path, "?") // a filter may match nothing and succeed
	for _, id := range idList(x) {
		if strings.Contains(path, id) {
			return true
		}
	}
	return false
}

// inProject sends a project-scoped request with the other tenant's project.
func inProject(x ids, method, path string, body any) []probeReq {
	return []probeReq{{method: method, path: path, body: body, project: x.project}}
}

// bothProjects sends the same request from the caller's project and the other tenant's.
func bothProjects(o own, x ids, method, path string, body any) []probeReq {
	return []probeReq{{method: method, path: path, body: body, project: o.project}, {method: method, path: path, body: body, project: x.project}}
}

// taskProbe addresses the other tenant's task from the caller's own project
// and from the other tenant's project.
func taskProbe(o own, x ids, method, suffix string, body any) []probeReq {
	p := "/api/tasks/" + x.task + suffix
	return []probeReq{{method: method, path: p, body: body, project: o.project}, {method: method, path: p, body: body, project: x.project}}
}

// projectAndForeign addresses an id from the caller's own project and from
// the other tenant's project.
func projectAndForeign(o own, x ids, method, path string, body any) []probeReq {
	return []probeReq{{method: method, path: path, body: body, project: o.project}, {method: method, path: path, body: body, project: x.project}}
}

func send(c *client, rq probeReq) *resp {
	c.env.t.Helper()
	saved := c.Project
	c.Project = rq.project
	defer func() { c.Project = saved }()
	return c.do(rq.method, rq.path, rq.body)
}
