package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type runCommandIn struct {
	Target         string   `json:"target" jsonschema:"a connector name from list_connectors, a label selector such as env=prod,role=db (every online match), or server"`
	Command        string   `json:"command" jsonschema:"the shell command line (sh -c)"`
	Secrets        []string `json:"secrets,omitempty" jsonschema:"names of project or org secrets to inject as environment variables; their values are masked in the output"`
	TimeoutSeconds int      `json:"timeout_seconds,omitempty" jsonschema:"kill the command's process group after this many seconds (default 60; the project sets the maximum)"`
	ApprovalID     string   `json:"approval_id,omitempty" jsonschema:"the approval a previous call asked for, once a person approved it"`
}

// runCommandTool: run_command runs POST /api/commands, the agent's path:
// rules, approvals, secret injection and masking.
func runCommandTool() curatedTool {
	const route = "POST /api/commands"
	tool := &mcp.Tool{Name: "run_command", Title: "Run a command on hosts",
		Description: "Run a shell command on the project's connectors (or the opsagent host when the operator allows it) and read each " +
			"host's exit code and output. must_never rules refuse it; a command that can change things waits for a person's approval: " +
			"the answer then names an approval_id, and once a person approved it (approve tool or the console) the same call with " +
			"approval_id runs it exactly once. The host's own allow-list can still refuse it.",
		Annotations: &mcp.ToolAnnotations{Title: "Run a command on hosts", DestructiveHint: hint(true), OpenWorldHint: hint(true)}}
	return curated(tool, []string{route},
		func(ctx context.Context, m *mcpCall, in runCommandIn) *mcp.CallToolResult {
			return m.run(ctx, route, nil, nil, CommandRun{Target: in.Target, Command: in.Command, Secrets: in.Secrets,
				TimeoutSeconds: in.TimeoutSeconds, ApprovalID: in.ApprovalID}, "")
		})
}
