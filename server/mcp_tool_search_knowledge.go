package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type searchKnowledgeIn struct {
	Query      string `json:"query" jsonschema:"what to look for: a symptom, a service, an error message or a command"`
	Collection string `json:"collection,omitempty" jsonschema:"runbooks, facts, incidents or memories; every collection when empty"`
	Tag        string `json:"tag,omitempty" jsonschema:"only documents carrying this tag"`
	Limit      int    `json:"limit,omitempty" jsonschema:"at most this many snippets, 1 to 100 (default 10)"`
}

// searchKnowledgeTool: search_knowledge runs GET /api/knowledge/search.
func searchKnowledgeTool() curatedTool {
	const route = "GET /api/knowledge/search"
	return curated(readOnlyTool("search_knowledge", "Search knowledge",
		"Search the project's runbooks, facts, past incidents and memories. Answers ranked snippets, each with its document and heading; read a whole document with read_document."),
		[]string{route},
		func(ctx context.Context, m *mcpCall, in searchKnowledgeIn) *mcp.CallToolResult {
			return m.run(ctx, route, nil, queryOf("q", in.Query, "collection", in.Collection, "tag", in.Tag, "limit", in.Limit), nil, "")
		})
}
