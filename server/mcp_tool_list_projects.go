package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type listProjectsIn struct {
	IncludeArchived bool `json:"include_archived,omitempty" jsonschema:"also list archived projects"`
}

// listProjectsTool: list_projects runs GET /api/projects.
func listProjectsTool() curatedTool {
	const route = "GET /api/projects"
	return curated(readOnlyTool("list_projects", "List projects",
		"The organization's projects this credential can see (an API key's project allow-list applies). Each project's own tools are at /api/mcp/{project_id}."),
		[]string{route},
		func(ctx context.Context, m *mcpCall, in listProjectsIn) *mcp.CallToolResult {
			q := queryOf()
			if in.IncludeArchived {
				q.Set("include_archived", "true")
			}
			return m.run(ctx, route, nil, q, nil, "")
		})
}
