package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// curatedTool is a hand-named tool with an input made for agents. Its logic
// is a few calls of REST routes through the pipeline (mcpCall.run), so it
// never holds a copy of a handler's rules; routes lists those calls, and
// the tool is listed only to callers who can reach every one of them.
type curatedTool struct {
	name   string
	routes []string
	add    func(srv *mcp.Server)
}

// curated declares a tool whose input type In gives its schema (field
// comments in `jsonschema` tags become the descriptions an agent reads).
func curated[In any](tool *mcp.Tool, routes []string, run func(ctx context.Context, m *mcpCall, in In) *mcp.CallToolResult) curatedTool {
	return curatedTool{name: tool.Name, routes: routes, add: func(srv *mcp.Server) {
		mcp.AddTool(srv, tool, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
			m, err := callFrom(ctx)
			if err != nil {
				return nil, nil, err
			}
			return run(ctx, m, in), nil, nil
		})
	}}
}

// projectCuratedTools are the tools of /api/mcp/{project_id}.
func projectCuratedTools() []curatedTool {
	return []curatedTool{
		searchKnowledgeTool(), readDocumentTool(), recallMemoriesTool(),
		listSessionsTool(), readSessionTool(),
		listApprovalsTool(), approveTool(), denyTool(),
		listIncidentsTool(), readIncidentTool(), readFindingsTool(),
		listTasksTool(), triggerTaskTool(),
		listConnectorsTool(), runCommandTool(),
	}
}

// orgCuratedTools are the tools of /api/mcp/_org.
func orgCuratedTools() []curatedTool {
	return []curatedTool{whoamiTool(), listProjectsTool(), listMembersTool(), searchAuditLogTool(), orgUsageTool()}
}

// call runs one route for a curated tool: body (if not nil) is sent as JSON,
// idempotencyKey (if set) as the Idempotency-Key header.
func (m *mcpCall) call(ctx context.Context, routeKey string, params map[string]string, query url.Values, body any, idempotencyKey string) (*routeResult, *mcp.CallToolResult) {
	var raw []byte
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, argError(err)
		}
		raw = b
	}
	var header http.Header
	if idempotencyKey != "" {
		header = http.Header{"Idempotency-Key": {idempotencyKey}}
	}
	res, err := m.dispatch(ctx, routeKey, params, query, raw, header)
	if err != nil {
		return nil, argError(err)
	}
	return res, nil
}

// run is call answered as the tool's result.
func (m *mcpCall) run(ctx context.Context, routeKey string, params map[string]string, query url.Values, body any, idempotencyKey string) *mcp.CallToolResult {
	res, fail := m.call(ctx, routeKey, params, query, body, idempotencyKey)
	if fail != nil {
		return fail
	}
	return toolResult(res)
}

// queryOf builds a query from name/value pairs, leaving out zero values so
// the route's own defaults apply.
func queryOf(pairs ...any) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		name := pairs[i].(string)
		switch v := pairs[i+1].(type) {
		case string:
			if v != "" {
				q.Set(name, v)
			}
		case int:
			if v != 0 {
				q.Set(name, fmt.Sprint(v))
			}
		case *bool:
			if v != nil {
				q.Set(name, fmt.Sprint(*v))
			}
		default:
			panic(fmt.Sprintf("queryOf: %s has unsupported type %T", name, v))
		}
	}
	return q
}

// hint is a pointer to b, for the optional annotation flags.
func hint(b bool) *bool { return &b }

func readOnlyTool(name, title, desc string) *mcp.Tool {
	return &mcp.Tool{Name: name, Title: title, Description: desc,
		Annotations: &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: hint(false)}}
}

func actionTool(name, title, desc string, idempotent bool) *mcp.Tool {
	return &mcp.Tool{Name: name, Title: title, Description: desc,
		Annotations: &mcp.ToolAnnotations{Title: title, DestructiveHint: hint(false), IdempotentHint: idempotent, OpenWorldHint: hint(false)}}
}
