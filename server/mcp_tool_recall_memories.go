package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type recallMemoriesIn struct {
	Query  string `json:"query,omitempty" jsonschema:"only memories whose key or text contains this"`
	Scope  string `json:"scope,omitempty" jsonschema:"project or org; both when empty"`
	Limit  int    `json:"limit,omitempty" jsonschema:"page size, 1 to 200 (default 50)"`
	Offset int    `json:"offset,omitempty" jsonschema:"memories to skip"`
}

// recallMemoriesTool: recall_memories runs GET /api/memories.
func recallMemoriesTool() curatedTool {
	const route = "GET /api/memories"
	return curated(readOnlyTool("recall_memories", "Recall memories",
		"List what the agent remembers about this project and its organization (facts saved by earlier sessions or by people), most recent first."),
		[]string{route},
		func(ctx context.Context, m *mcpCall, in recallMemoriesIn) *mcp.CallToolResult {
			return m.run(ctx, route, nil, queryOf("q", in.Query, "scope", in.Scope, "limit", in.Limit, "offset", in.Offset), nil, "")
		})
}
