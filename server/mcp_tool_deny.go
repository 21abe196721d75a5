package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type denyIn struct {
	ApprovalID string `json:"approval_id" jsonschema:"the approval's id (uuid), from list_approvals"`
	Comment    string `json:"comment" jsonschema:"why it is refused; kept with the decision and in the audit log"`
}

// denyTool: deny runs POST /api/approvals/{approval_id}/deny.
func denyTool() curatedTool {
	const route = "POST /api/approvals/{approval_id}/deny"
	return curated(actionTool("deny", "Deny a pending action",
		"Deny a pending approval with a reason: the held action never runs. Single use; an expired or already decided approval answers 409.", false),
		[]string{route},
		func(ctx context.Context, m *mcpCall, in denyIn) *mcp.CallToolResult {
			return m.run(ctx, route, map[string]string{"approval_id": in.ApprovalID}, nil, ApprovalDecision{Comment: in.Comment}, "")
		})
}
