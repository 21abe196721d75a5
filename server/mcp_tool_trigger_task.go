package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type triggerTaskIn struct {
	TaskID         string `json:"task_id" jsonschema:"the task's id (uuid), from list_tasks"`
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"any unique string: retrying with the same key returns the first run instead of starting another"`
}

// triggerTaskTool: trigger_task runs POST /api/tasks/{task_id}/trigger.
func triggerTaskTool() curatedTool {
	const route = "POST /api/tasks/{task_id}/trigger"
	return curated(actionTool("trigger_task", "Run a task now",
		"Start a run of a task now, outside its schedule. Answers the run and its agent session id at once (202); follow it with read_session. A disabled task answers 409.", false),
		[]string{route},
		func(ctx context.Context, m *mcpCall, in triggerTaskIn) *mcp.CallToolResult {
			return m.run(ctx, route, map[string]string{"task_id": in.TaskID}, nil, nil, in.IdempotencyKey)
		})
}
