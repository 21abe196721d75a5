package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listMembersTool: list_members runs GET /api/organizations/{org_id}/members
// for the credential's own organization.
func listMembersTool() curatedTool {
	const route = "GET /api/organizations/{org_id}/members"
	return curated(readOnlyTool("list_members", "List organization members",
		"The people of the organization with their roles (owner, admin, member, viewer)."),
		[]string{route},
		func(ctx context.Context, m *mcpCall, _ noInput) *mcp.CallToolResult {
			return m.run(ctx, route, map[string]string{"org_id": m.c.ID.OrgID}, nil, nil, "")
		})
}
