package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// orgUsageTool: org_usage runs GET /api/dashboard/org-summary.
func orgUsageTool() curatedTool {
	const route = "GET /api/dashboard/org-summary"
	return curated(readOnlyTool("org_usage", "Organization usage",
		"Sessions and LLM cost of the organization's projects this credential can see."),
		[]string{route},
		func(ctx context.Context, m *mcpCall, _ noInput) *mcp.CallToolResult {
			return m.run(ctx, route, nil, nil, nil, "")
		})
}
