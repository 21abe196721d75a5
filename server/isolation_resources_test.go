package server_test

// resourceProbes: tasks, knowledge, memories, secrets, rules, budgets,
// integrations, connectors and their settings.
var resourceProbes = map[string]probe{
	"GET /api/tasks/stats": func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/tasks/stats", nil) },
	"GET /api/tasks":       func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/tasks", nil) },
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
	"GET /api/organizations/{org_id}/model-settings": func(o own, x ids) []probeReq {
		return one("GET", "/api/organizations/"+x.org+"/model-settings", nil)
	},
	"PUT /api/organizations/{org_id}/model-settings": func(o own, x ids) []probeReq {
		return one("PUT", "/api/organizations/"+x.org+"/model-settings", map[string]any{"context_window": 0, "answer_reserve": 0,
			"text_tool_calls": "on", "fallbacks": []any{}})
	},
	"POST /api/organizations/{org_id}/model-settings/test": func(o own, x ids) []probeReq {
		return one("POST", "/api/organizations/"+x.org+"/model-settings/test", map[string]any{"position": 0})
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
}
