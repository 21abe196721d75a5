package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type readIncidentIn struct {
	IncidentID string `json:"incident_id" jsonschema:"the incident's id (uuid), from list_incidents"`
}

// readIncidentTool: read_incident runs GET /api/incidents/{incident_id}.
func readIncidentTool() curatedTool {
	const route = "GET /api/incidents/{incident_id}"
	return curated(readOnlyTool("read_incident", "Read an incident",
		"Read one incident with its timeline: the alerts it grouped, the agent sessions it started and the notes people added."),
		[]string{route},
		func(ctx context.Context, m *mcpCall, in readIncidentIn) *mcp.CallToolResult {
			return m.run(ctx, route, map[string]string{"incident_id": in.IncidentID}, nil, nil, "")
		})
}
