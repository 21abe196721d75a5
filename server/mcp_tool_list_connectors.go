package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type listConnectorsIn struct{}

// listConnectorsTool: list_connectors runs GET /api/connectors.
func listConnectorsTool() curatedTool {
	const route = "GET /api/connectors"
	return curated(readOnlyTool("list_connectors", "List connectors",
		"List the project's connectors (the hosts run_command can reach) with status online/offline, hostname, OS, labels and last contact. "+
			"Target one by name, or several by a label selector such as env=prod,role=db."),
		[]string{route},
		func(ctx context.Context, m *mcpCall, _ listConnectorsIn) *mcp.CallToolResult {
			return m.run(ctx, route, nil, nil, nil, "")
		})
}
