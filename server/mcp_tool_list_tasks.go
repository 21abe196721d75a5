package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type listTasksIn struct {
	Search    string `json:"search,omitempty" jsonschema:"substring of the name, description or prompt"`
	AgentType string `json:"agent_type,omitempty" jsonschema:"general, sre, security, cost, kubernetes or database"`
	Enabled   *bool  `json:"enabled,omitempty" jsonschema:"only enabled (true) or disabled (false) tasks"`
	Limit     int    `json:"limit,omitempty" jsonschema:"page size, 1 to 200 (default 25)"`
	Offset    int    `json:"offset,omitempty" jsonschema:"tasks to skip"`
}

// listTasksTool: list_tasks runs GET /api/tasks.
func listTasksTool() curatedTool {
	const route = "GET /api/tasks"
	return curated(readOnlyTool("list_tasks", "List tasks",
		"List the project's agent tasks (scheduled or webhook-driven prompts) with their schedule, next and last run. Run one now with trigger_task."),
		[]string{route},
		func(ctx context.Context, m *mcpCall, in listTasksIn) *mcp.CallToolResult {
			return m.run(ctx, route, nil, queryOf("search", in.Search, "agent_type", in.AgentType, "enabled", in.Enabled, "limit", in.Limit, "offset", in.Offset), nil, "")
		})
}
