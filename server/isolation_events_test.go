package server_test

// eventProbes: webhooks, approvals, incidents, agent sessions, chat, usage,
// dashboards, MCP mounts and per-user preferences.
var eventProbes = map[string]probe{
	// Webhooks: the receiver has no tenant: the task id is the webhook's
	// public address and its secret the credential, so bravo's live webhook
	// answers 401 to an unsigned delivery where a random id answers 404.
	// TestWebhookBadInput shows a task without an enabled webhook reads like
	// an unknown id. Management routes are addressed by task like the task
	// routes, and are probed below with bravo's real webhook, event and rule.
	"POST /api/webhooks/{task_id}": nil,
	// The badge token is a random capability, not a tenant id.
	"GET /api/webhook-badges/{badge_token}": nil,
	"GET /api/webhooks":                     func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/webhooks", nil) },
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
