package server

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// middleware sits between the SDK and the tools of one request: it hides
// from tools/list what the caller cannot reach, and it writes the audit
// event mcp.tool_called for every tools/call, whatever became of it
// (unknown tool, bad arguments, a REST refusal or a success).
func (m *mcpCall) middleware(visible map[string]bool, surface map[string]string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/list":
				res, err := next(ctx, method, req)
				if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil {
					kept := lr.Tools[:0:0]
					for _, t := range lr.Tools {
						if visible[t.Name] {
							kept = append(kept, t)
						}
					}
					lr.Tools = kept
				}
				return res, err
			case "tools/call":
				name := ""
				if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p != nil {
					name = truncate(p.Name, 128)
				}
				rec := &callRecord{}
				res, err := next(context.WithValue(ctx, callRecordKey{}, rec), method, req)
				m.auditCall(name, surface[name], rec, res, err)
				return res, err
			}
			return next(ctx, method, req)
		}
	}
}

// auditCall records one tool call. The outcome follows the REST answers the
// tool got: 401/403 denied, any other failure failure. The routes it ran
// each wrote their own REST audit events as well (writes, denials).
func (m *mcpCall) auditCall(name, surface string, rec *callRecord, res mcp.Result, err error) {
	if surface == "" {
		surface = "unknown"
	}
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
