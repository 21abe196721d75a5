package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type readFindingsIn struct {
	IncidentID string `json:"incident_id" jsonschema:"the incident's id (uuid), from list_incidents"`
}

// readFindingsTool: read_findings runs GET /api/incidents/{incident_id}/findings.
func readFindingsTool() curatedTool {
	const route = "GET /api/incidents/{incident_id}/findings"
	return curated(readOnlyTool("read_findings", "Read an incident's findings",
		"Read the findings of an incident's investigations, newest first: summary, root-cause hypotheses with confidence and evidence, impact and next steps."),
		[]string{route},
		func(ctx context.Context, m *mcpCall, in readFindingsIn) *mcp.CallToolResult {
			return m.run(ctx, route, map[string]string{"incident_id": in.IncidentID}, queryOf("limit", 10), nil, "")
		})
}
