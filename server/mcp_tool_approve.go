package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type approveIn struct {
	ApprovalID string `json:"approval_id" jsonschema:"the approval's id (uuid), from list_approvals"`
	Comment    string `json:"comment,omitempty" jsonschema:"why; kept with the decision and in the audit log"`
}

// approveTool: approve runs POST /api/approvals/{approval_id}/approve.
func approveTool() curatedTool {
	const route = "POST /api/approvals/{approval_id}/approve"
	return curated(actionTool("approve", "Approve a pending action",
		"Approve a pending approval: the held action or webhook event runs. Single use; an expired or already decided approval answers 409.", false),
		[]string{route},
		func(ctx context.Context, m *mcpCall, in approveIn) *mcp.CallToolResult {
			return m.run(ctx, route, map[string]string{"approval_id": in.ApprovalID}, nil, ApprovalDecision{Comment: in.Comment}, "")
		})
}
