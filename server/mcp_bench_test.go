//go:build unix

package server_test

// What an MCP tool call costs over the REST request it makes:
//
//	go test -run '^$' -bench MCP -benchtime 3s ./server/
//
// rest is GET /api/tasks/{id}; bridged_call is tools/call of
// get_tasks_task_id on /_rest (one stateless POST: a per-request MCP server
// with the mount's tools, then the same GET dispatched internally);
// tools_list is tools/list on the same mount.

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsagent/opsagent/internal/testkit"
)

func BenchmarkMCP(b *testing.B) {
	base := benchServer(b)
	post := func(path, token, project string, body any) map[string]any {
		return testkit.Call(b, "POST", base+path, token, project, body, 0)
	}
	token := post("/api/auth/register", "", "", map[string]any{"email": "bench-mcp@example.com", "password": "correct horse battery"})["access_token"].(string)
	project := post("/api/projects", token, "", map[string]any{"name": "bench"})["id"].(string)
	task := post("/api/tasks", token, project, map[string]any{"name": "bench", "prompt": "p"})["id"].(string)

	b.Run("rest", func(b *testing.B) {
		req, _ := http.NewRequest("GET", base+"/api/tasks/"+task, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("X-Project-ID", project)
		for b.Loop() {
			res, err := http.DefaultClient.Do(req)
			if err != nil || res.StatusCode != 200 {
				b.Fatal(err, res.StatusCode)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
	})
	tr := &mcp.StreamableClientTransport{Endpoint: base + "/api/mcp/" + project + "/_rest",
		HTTPClient: &http.Client{Transport: bearerTransport{token: token}}, DisableStandaloneSSE: true}
	s, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.Run("bridged_call", func(b *testing.B) {
		for b.Loop() {
			res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_tasks_task_id", Arguments: map[string]any{"task_id": task}})
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})
	b.Run("tools_list", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.ListTools(context.Background(), nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
