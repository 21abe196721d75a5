package server

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpMiddleware sits between the SDK and the tools of one endpoint. For the
// caller of each request (see callFrom) it puts the mount's instructions in
// initialize and server/discover, hides from tools/list what the caller
// cannot reach, and writes the audit event mcp.tool_called for every
// tools/call, whatever became of it (unknown tool, bad arguments, a REST
// refusal or a success).
func mcpMiddleware(surface string, reach map[string]func(*Identity) bool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			m, err := callFrom(ctx)
			if err != nil {
				return nil, err
			}
			switch method {
			case "tools/call":
				name := ""
				if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p != nil {
					name = truncate(p.Name, 128)
				}
				kind := "unknown"
				if reach[name] != nil {
					kind = surface
				}
				rec := &callRecord{}
				res, err := next(context.WithValue(ctx, callRecordKey{}, rec), method, req)
				m.auditCall(name, kind, rec, res, err)
				return res, err
			}
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			switch r := res.(type) {
			case *mcp.ListToolsResult:
				kept := make([]*mcp.Tool, 0, len(r.Tools))
				for _, t := range r.Tools {
					if can := reach[t.Name]; can != nil && can(m.c.ID) {
						kept = append(kept, t)
					}
				}
				r.Tools = kept
			case *mcp.InitializeResult:
				r.Instructions = m.instructions
			case *mcp.DiscoverResult:
				r.Instructions = m.instructions
			}
			return res, err
		}
	}
}

// auditCall records one tool call. The outcome follows the REST answers the
// tool got: 401/403 denied, any other failure failure. The routes it ran
// each wrote their own REST audit events as well (writes, denials).
func (m *mcpCall) auditCall(name, surface string, rec *callRecord, res mcp.Result, err error) {
	rec.mu.Lock()
	status, routes, problem := rec.status, append([]string(nil), rec.routes...), rec.problem
	rec.mu.Unlock()
	isErr := false
	if r, ok := res.(*mcp.CallToolResult); ok && r != nil {
		isErr = r.IsError
	}
	outcome := "success"
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		outcome = "denied"
	case err != nil || isErr || status >= 400:
		outcome = "failure"
	}
	detail := map[string]any{"tool": name, "mount": m.mount, "surface": surface}
	if len(routes) > 0 {
		detail["routes"] = routes
	}
	if status != 0 {
		detail["status"] = status
	}
	if problem != "" {
		detail["problem"] = truncate(problem, 300)
	}
	if err != nil {
		detail["error"] = truncate(err.Error(), 300)
	}
	m.c.Audit("mcp.tool_called", outcome, "mcp_tool", name, detail)
}
