package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type listIncidentsIn struct {
	Status string `json:"status,omitempty" jsonschema:"triggered, acknowledged or resolved; open ones first when empty"`
	Limit  int    `json:"limit,omitempty" jsonschema:"page size, 1 to 200 (default 25)"`
	Offset int    `json:"offset,omitempty" jsonschema:"incidents to skip"`
}

// listIncidentsTool: list_incidents runs GET /api/incidents.
func listIncidentsTool() curatedTool {
	const route = "GET /api/incidents"
	return curated(readOnlyTool("list_incidents", "List incidents",
		"List the project's incidents (alerts correlated by the webhook receiver), open ones first. Read one's timeline with read_incident."),
		[]string{route},
		func(ctx context.Context, m *mcpCall, in listIncidentsIn) *mcp.CallToolResult {
			return m.run(ctx, route, nil, queryOf("status", in.Status, "limit", in.Limit, "offset", in.Offset), nil, "")
		})
}
