package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type readDocumentIn struct {
	Collection string `json:"collection" jsonschema:"runbooks, facts, incidents or memories"`
	Name       string `json:"name" jsonschema:"the document's name as search_knowledge reports it, e.g. disk-full.md"`
	Scope      string `json:"scope,omitempty" jsonschema:"project (default) or org for documents shared by the whole organization"`
}

// readDocumentTool: read_document runs GET /api/knowledge/documents/by-name.
func readDocumentTool() curatedTool {
	const route = "GET /api/knowledge/documents/by-name"
	return curated(readOnlyTool("read_document", "Read a knowledge document",
		"Read one runbook, fact sheet or incident write-up in full (Markdown), with its tags."),
		[]string{route},
		func(ctx context.Context, m *mcpCall, in readDocumentIn) *mcp.CallToolResult {
			return m.run(ctx, route, nil, queryOf("collection", in.Collection, "name", in.Name, "scope", in.Scope), nil, "")
		})
}
