package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type noInput struct{}

// whoamiTool: whoami runs GET /api/auth/me.
func whoamiTool() curatedTool {
	const route = "GET /api/auth/me"
	return curated(readOnlyTool("whoami", "Who am I",
		"The user this credential acts as, with the current organization."),
		[]string{route},
		func(ctx context.Context, m *mcpCall, _ noInput) *mcp.CallToolResult {
			return m.run(ctx, route, nil, nil, nil, "")
		})
}
