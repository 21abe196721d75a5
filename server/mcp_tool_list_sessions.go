package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type listSessionsIn struct {
	Query         string `json:"query,omitempty" jsonschema:"substring of the title, summary, name, session id or task name"`
	Status        string `json:"status,omitempty" jsonschema:"pending, running, completed, failed, cancelled or timeout"`
	Source        string `json:"source,omitempty" jsonschema:"webchat, telegram, slack, whatsapp or task"`
	TriggerSource string `json:"trigger_source,omitempty" jsonschema:"manual, scheduled, webhook or web"`
	Limit         int    `json:"limit,omitempty" jsonschema:"page size, 1 to 200 (default 25)"`
	Offset        int    `json:"offset,omitempty" jsonschema:"sessions to skip"`
}

// listSessionsTool: list_sessions runs GET /api/sessions/index.
func listSessionsTool() curatedTool {
	const route = "GET /api/sessions/index"
	return curated(readOnlyTool("list_sessions", "List agent sessions",
		"List the project's agent sessions (chats, task runs, webhook runs), most recently active first, with status, cost and summary. Read one with read_session."),
		[]string{route},
		func(ctx context.Context, m *mcpCall, in listSessionsIn) *mcp.CallToolResult {
			return m.run(ctx, route, nil, queryOf("q", in.Query, "status", in.Status, "source", in.Source,
				"trigger_source", in.TriggerSource, "limit", in.Limit, "offset", in.Offset), nil, "")
		})
}
