package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpMaxResult caps the part of a route's answer a tool returns: an agent's
// context window is the real limit, and a transcript can be large.
const mcpMaxResult = 512 << 10

// mcpCall is one MCP request of one caller on one mount. Every tool it runs
// is dispatched as an internal REST request carrying the caller's own
// credential, so authentication, scopes, the project allow-list, validation
// and audit are those of the REST route, not a second copy of them.
type mcpCall struct {
	s       *Server
	c       *Ctx   // the MCP HTTP request (identity, project, client address)
	mount   string // "project" or "org"
	project string // X-Project-ID of every dispatched request ("" on the org mount)
	// instructions replace the server's in initialize and server/discover.
	instructions string
}

type mcpCallKey struct{}

// callFrom returns the caller of an MCP request. The SDK serves each
// stateless POST on a connection made with the request's context, so its
// values reach middleware and tool handlers.
func callFrom(ctx context.Context) (*mcpCall, error) {
	m, _ := ctx.Value(mcpCallKey{}).(*mcpCall)
	if m == nil {
		return nil, errors.New("mcp: request has no caller")
	}
	return m, nil
}

// routeResult is a route's answer to one dispatched request.
type routeResult struct {
	Route     string // "GET /api/tasks/{task_id}"
	Status    int
	Body      []byte
	Truncated bool
}

// OK reports a 2xx answer.
func (r *routeResult) OK() bool { return r.Status >= 200 && r.Status < 300 }

// callRecord collects what the tools of one tools/call dispatched, for its
// audit event (see mcpMiddleware).
type callRecord struct {
	mu      sync.Mutex
	routes  []string
	status  int // the first failure, else the last success
	problem string
}

type callRecordKey struct{}

func recordFrom(ctx context.Context) *callRecord {
	r, _ := ctx.Value(callRecordKey{}).(*callRecord)
	return r
}

func (rec *callRecord) add(route string, status int) {
	if rec == nil {
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.routes = append(rec.routes, route)
	if rec.status == 0 || rec.status < 300 {
		rec.status = status
	}
}

// reject notes a call refused before any route ran (bad arguments).
func (rec *callRecord) reject(status int, problem string) {
	if rec == nil {
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.status, rec.problem = status, problem
}

// dispatch serves one internal request through the server's own handler:
// the route table, the guards of wrap and the handler, exactly as over the
// network. routeKey names the route ("POST /api/tasks/{task_id}/trigger");
// params fill its path; header adds request headers (Idempotency-Key).
func (m *mcpCall) dispatch(ctx context.Context, routeKey string, params map[string]string, query url.Values, body []byte, header http.Header) (*routeResult, error) {
	method, tmpl, ok := strings.Cut(routeKey, " ")
	if !ok {
		return nil, fmt.Errorf("mcp: bad route key %q", routeKey)
	}
	path, err := fillPath(tmpl, params)
	if err != nil {
		recordFrom(ctx).reject(http.StatusUnprocessableEntity, err.Error())
		return nil, err
	}
	target := path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	// The internal request carries no value of the MCP request's context
	// (identity, params, audit marks): the pipeline derives its own. It
	// inherits only cancellation.
	ictx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	req, err := http.NewRequestWithContext(ictx, method, "http://mcp.internal"+target, bytes.NewReader(body))
	if err != nil {
		recordFrom(ctx).reject(http.StatusUnprocessableEntity, err.Error())
		return nil, err
	}
	outer := m.c.R
	req.Host, req.RemoteAddr = outer.Host, outer.RemoteAddr
	for _, h := range []string{"Authorization", "Cookie", "User-Agent", "X-Forwarded-For"} {
		if v := outer.Header.Values(h); len(v) > 0 {
			req.Header[h] = v
		}
	}
	if rid := RequestID(outer.Context()); rid != "" {
		req.Header.Set("X-Request-ID", rid) // one id ties the MCP request to what it ran
	}
	for k, vs := range header {
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if m.project != "" {
		req.Header.Set("X-Project-ID", m.project)
	}
	w := &captureWriter{header: http.Header{}, limit: mcpMaxResult}
	m.s.handler.ServeHTTP(w, req)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	recordFrom(ctx).add(routeKey, w.status)
	return &routeResult{Route: routeKey, Status: w.status, Body: w.buf.Bytes(), Truncated: w.truncated}, nil
}

// fillPath substitutes {name} segments of a route path. A value may not
// leave its segment: no slash, no dot segments, nothing empty.
func fillPath(tmpl string, params map[string]string) (string, error) {
	segs := strings.Split(tmpl, "/")
	for i, seg := range segs {
		if !isParam(seg) {
			continue
		}
		name := seg[1 : len(seg)-1]
		v := params[name]
		if v == "" || v == "." || v == ".." || strings.ContainsAny(v, "/\\") || len(v) > 255 {
			return "", fmt.Errorf("argument %s: required, one path segment of at most 255 characters", name)
		}
		segs[i] = url.PathEscape(v)
	}
	return strings.Join(segs, "/"), nil
}

// captureWriter records an internal response, keeping at most limit bytes.
type captureWriter struct {
	header    http.Header
	status    int
	buf       bytes.Buffer
	limit     int
	truncated bool
}

func (w *captureWriter) Header() http.Header { return w.header }

func (w *captureWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *captureWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	room := w.limit - w.buf.Len()
	if len(b) > room {
		w.buf.Write(b[:max(room, 0)])
		w.truncated = true
		return len(b), nil
	}
	return w.buf.Write(b)
}

// toolResult turns a route's answer into a tool result: the JSON body as
// text (what every client shows a model), the same value as structured
// content when it is an object, and isError for anything but 2xx so a model
// sees the REST error (403 naming the permission it lacks, 422 with the field).
func toolResult(r *routeResult) *mcp.CallToolResult {
	text := string(r.Body)
	if r.Truncated {
		text += fmt.Sprintf("\n[truncated at %d bytes]", mcpMaxResult)
	}
	res := &mcp.CallToolResult{}
	if !r.OK() {
		res.IsError = true
		text = fmt.Sprintf("%s answered %d %s: %s", r.Route, r.Status, http.StatusText(r.Status), text)
	}
	if text == "" {
		text = fmt.Sprintf("%d %s", r.Status, http.StatusText(r.Status))
	}
	res.Content = []mcp.Content{&mcp.TextContent{Text: text}}
	var obj map[string]any
	if r.OK() && !r.Truncated && json.Unmarshal(r.Body, &obj) == nil {
		res.StructuredContent = obj
	}
	return res
}

// joinedResult answers with several routes' bodies as one object, named by
// parts' keys; the first failure answers alone.
func joinedResult(names []string, results []*routeResult) *mcp.CallToolResult {
	joined := map[string]json.RawMessage{}
	for i, r := range results {
		if !r.OK() || r.Truncated {
			return toolResult(r)
		}
		joined[names[i]] = json.RawMessage(r.Body)
	}
	b, err := json.Marshal(joined)
	if err != nil {
		return argError(err)
	}
	return toolResult(&routeResult{Route: "joined", Status: http.StatusOK, Body: b})
}

// argError is a tool result for arguments refused before any route ran.
func argError(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
}
