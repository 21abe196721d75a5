package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type listApprovalsIn struct {
	Status    string `json:"status,omitempty" jsonschema:"pending, approved, denied or expired; every status (pending first) when empty"`
	Kind      string `json:"kind,omitempty" jsonschema:"webhook_event or tool_call"`
	SessionID string `json:"session_id,omitempty" jsonschema:"only the approvals of this agent session"`
	Limit     int    `json:"limit,omitempty" jsonschema:"page size, 1 to 200 (default 25)"`
	Offset    int    `json:"offset,omitempty" jsonschema:"approvals to skip"`
}

// listApprovalsTool: list_approvals runs GET /api/approvals.
func listApprovalsTool() curatedTool {
	const route = "GET /api/approvals"
	return curated(readOnlyTool("list_approvals", "List approvals",
		"List the risky actions and webhook events waiting for (or given) a human decision, pending first. Decide with approve or deny."),
		[]string{route},
		func(ctx context.Context, m *mcpCall, in listApprovalsIn) *mcp.CallToolResult {
			return m.run(ctx, route, nil, queryOf("status", in.Status, "kind", in.Kind, "session_id", in.SessionID, "limit", in.Limit, "offset", in.Offset), nil, "")
		})
}
