package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type searchAuditLogIn struct {
	Action   string `json:"action,omitempty" jsonschema:"an action such as task.created; a trailing * matches a prefix (mcp.*)"`
	Actor    string `json:"actor,omitempty" jsonschema:"a user id or API key id"`
	Outcome  string `json:"outcome,omitempty" jsonschema:"success, failure or denied"`
	TargetID string `json:"target_id,omitempty" jsonschema:"the id (or name) of what the event is about"`
	Limit    int    `json:"limit,omitempty" jsonschema:"page size, 1 to 200 (default 50)"`
	Offset   int    `json:"offset,omitempty" jsonschema:"events to skip"`
}

// searchAuditLogTool: search_audit_log runs GET /api/audit-logs.
func searchAuditLogTool() curatedTool {
	const route = "GET /api/audit-logs"
	return curated(readOnlyTool("search_audit_log", "Search the audit log",
		"The organization's audit events (sign-ins, changes, denials, MCP tool calls), newest first, each hash-chained to the one before."),
		[]string{route},
		func(ctx context.Context, m *mcpCall, in searchAuditLogIn) *mcp.CallToolResult {
			return m.run(ctx, route, nil, queryOf("action", in.Action, "actor", in.Actor, "outcome", in.Outcome,
				"target_id", in.TargetID, "limit", in.Limit, "offset", in.Offset), nil, "")
		})
}
