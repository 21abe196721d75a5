package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type readSessionIn struct {
	SessionID         string `json:"session_id" jsonschema:"the session's id (uuid)"`
	IncludeTranscript bool   `json:"include_transcript,omitempty" jsonschema:"also return every message, tool call and tool result"`
}

// readSessionTool: read_session runs GET /api/sessions/detail/{session_id}
// and, when asked, GET /api/sessions/{session_id}/transcript.
func readSessionTool() curatedTool {
	const detail, transcript = "GET /api/sessions/detail/{session_id}", "GET /api/sessions/{session_id}/transcript"
	return curated(readOnlyTool("read_session", "Read an agent session",
		"Read one agent session: status, trigger, cost, tokens, summary; with include_transcript, its whole transcript as well."),
		[]string{detail, transcript},
		func(ctx context.Context, m *mcpCall, in readSessionIn) *mcp.CallToolResult {
			params := map[string]string{"session_id": in.SessionID}
			if !in.IncludeTranscript {
				return m.run(ctx, detail, params, nil, nil, "")
			}
			d, fail := m.call(ctx, detail, params, nil, nil, "")
			if fail != nil {
				return fail
			}
			if !d.OK() {
				return toolResult(d)
			}
			t, fail := m.call(ctx, transcript, params, nil, nil, "")
			if fail != nil {
				return fail
			}
			return joinedResult([]string{"session", "transcript"}, []*routeResult{d, t})
		})
}
