package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPMessage is a JSON-RPC 2.0 message of the Model Context Protocol (a
// request, a notification or a response); an array of them is a batch.
type MCPMessage struct {
	JSONRPC string          `json:"jsonrpc" doc:"always 2.0"`
	ID      any             `json:"id,omitempty"`
	Method  string          `json:"method,omitempty" doc:"initialize, tools/list, tools/call, ping, ..."`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// mcpMaxBody caps one MCP request (a tools/call with a document is the largest).
const mcpMaxBody = 1 << 20

// mcpMount serves the four MCP endpoints (spec 4.8) over Streamable HTTP in
// the stateless mode of protocol revision 2026-07-28 (2025 clients work in
// it too): every POST is answered on its own, so any replica can serve it
// and nothing is kept between requests. Each endpoint has one mcp.Server,
// built once from the route table; the caller of a request travels in its
// context (mcpCall), which the SDK hands to the middleware and the tools.
type mcpMount struct {
	s        *Server
	once     sync.Once
	routes   map[string]*Route // by "METHOD /path"
	bridge   map[string][]*bridgeTool
	handlers map[string]http.Handler // by endpoint: project, project/_rest, org, org/_rest
}

// mcpRoutes: the MCP mount points. The same route guards as REST run first:
// the credential (access token or API key) is checked before any MCP byte
// is read, so an unauthenticated client gets 401 with WWW-Authenticate.
func (s *Server) mcpRoutes() []*Route {
	m := &mcpMount{s: s}
	tags := []string{"mcp"}
	const note = " (MCP Streamable HTTP, stateless: POST JSON-RPC with Accept: application/json, text/event-stream)"
	return []*Route{
		{Method: "POST", Path: "/api/mcp/{project_id}", Summary: "Curated MCP tools of a project: knowledge search, sessions, approvals, incidents, tasks" + note, Tags: tags, Auth: AuthAny, Body: MCPMessage{}, Resp: MCPMessage{}, Status: 200, MaxBody: mcpMaxBody, RawBody: true, Handle: m.serveProject(false)},
		{Method: "POST", Path: "/api/mcp/{project_id}/_rest", Summary: "Every mcp-exposed project route the credential can reach, as MCP tools" + note, Tags: tags, Auth: AuthAny, Body: MCPMessage{}, Resp: MCPMessage{}, Status: 200, MaxBody: mcpMaxBody, RawBody: true, Handle: m.serveProject(true)},
		{Method: "POST", Path: "/api/mcp/_org", Summary: "Curated MCP tools of the credential's organization: projects, members, audit log, usage" + note, Tags: tags, Auth: AuthAny, Body: MCPMessage{}, Resp: MCPMessage{}, Status: 200, MaxBody: mcpMaxBody, RawBody: true, Handle: m.serveOrg(false)},
		{Method: "POST", Path: "/api/mcp/_org/_rest", Summary: "Every mcp-exposed organization route the credential can reach, as MCP tools" + note, Tags: tags, Auth: AuthAny, Body: MCPMessage{}, Resp: MCPMessage{}, Status: 200, MaxBody: mcpMaxBody, RawBody: true, Handle: m.serveOrg(true)},
	}
}

// load builds the servers on first use (the route table is complete by then).
func (m *mcpMount) load() {
	m.once.Do(func() {
		m.routes = map[string]*Route{}
		for _, rt := range m.s.routes {
			m.routes[rt.Method+" "+rt.Path] = rt
		}
		m.bridge = map[string][]*bridgeTool{}
		m.handlers = map[string]http.Handler{}
		curated := map[string][]curatedTool{"project": projectCuratedTools(), "org": orgCuratedTools()}
		for _, mount := range []string{"project", "org"} {
			tools, skipped := buildBridge(m.s.routes, mount)
			for _, sk := range skipped {
				m.s.log.Warn("mcp: route tagged MCP cannot be bridged", "route", sk)
			}
			m.bridge[mount] = tools
			// Curated tools: listed when the caller can reach every route they call.
			srv := m.newServer()
			reach := map[string]func(*Identity) bool{}
			for _, ct := range curated[mount] {
				ct.add(srv)
				reach[ct.name] = func(id *Identity) bool { return m.reachAll(id, ct.routes) }
			}
			srv.AddReceivingMiddleware(mcpMiddleware("curated", reach))
			m.handlers[mount] = m.newHandler(srv)
			// Bridged routes: listed when the caller can reach the route.
			srv = m.newServer()
			reach = map[string]func(*Identity) bool{}
			for _, bt := range tools {
				srv.AddTool(bt.tool, bt.handle)
				reach[bt.tool.Name] = func(id *Identity) bool { return canReach(id, bt.route) }
			}
			srv.AddReceivingMiddleware(mcpMiddleware("rest", reach))
			m.handlers[mount+"/_rest"] = m.newHandler(srv)
		}
	})
}

func (m *mcpMount) newServer() *mcp.Server {
	return mcp.NewServer(&mcp.Implementation{Name: "opsagent", Title: "opsagent", Version: Version}, &mcp.ServerOptions{
		Logger: m.s.log,
		// Stateless: no session to notify of list changes, no logging channel.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		// The protocol's default cache scope is public (a shared cache may
		// serve a list to anyone); these lists are cut to the caller's role
		// and keys and name the project, so they are private and not reused.
		SetCacheable: func(_ context.Context, _ mcp.Request, cc *mcp.Cacheable) {
			cc.CacheScope, cc.TTLMs = "private", 0
		},
	})
}

func (m *mcpMount) newHandler(srv *mcp.Server) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		Logger:       m.s.log,
		// The route already capped the body (MaxBody) and answers 413 itself.
		MaxRequestBodyBytes: -1,
		// The SDK refuses a loopback connection whose Host is not loopback
		// (DNS rebinding of an unauthenticated local server). Here every
		// request carried a verified credential before reaching the SDK, and
		// cookie-borne unsafe requests passed the cross-origin check, while a
		// reverse proxy on the same host (the usual deployment) forwards the
		// public Host over loopback: the check would refuse every real client.
		DisableLocalhostProtection: true,
	})
}

// serveProject handles /api/mcp/{project_id}[/_rest]. The project is
// resolved exactly like X-Project-ID: a project the caller cannot see, or
// one outside an API key's allow-list, is 404 like a random id.
func (m *mcpMount) serveProject(rest bool) func(*Ctx) error {
	return func(c *Ctx) error {
		id, err := c.IDParam("project_id")
		if err != nil {
			return err
		}
		p, err := m.s.projectFor(c, id)
		if err != nil {
			return err
		}
		c.Project = p
		instr := fmt.Sprintf("opsagent project %q (%s). Tools act with your credential inside this project and answer with the REST API's JSON; "+
			"a tool your role or key scopes do not allow answers 403.", p.Name, p.ID)
		if !rest {
			instr += " Every mcp-exposed REST route is also served as a tool at /api/mcp/" + p.ID + "/_rest."
		}
		m.serve(c, &mcpCall{s: m.s, c: c, mount: "project", project: p.ID, instructions: instr}, rest)
		return nil
	}
}

// serveOrg handles /api/mcp/_org[/_rest]: the credential's current org.
func (m *mcpMount) serveOrg(rest bool) func(*Ctx) error {
	return func(c *Ctx) error {
		instr := "opsagent organization " + c.ID.OrgID + ". Tools act with your credential in this organization and answer with the REST API's JSON. " +
			"Project tools live at /api/mcp/{project_id}."
		m.serve(c, &mcpCall{s: m.s, c: c, mount: "org", instructions: instr}, rest)
		return nil
	}
}

// serve hands one MCP POST to the endpoint's server with the caller in its
// context. Every tool is registered, so calling one the caller cannot reach
// gets the REST route's own 403; tools/list shows only the reachable ones.
func (m *mcpMount) serve(c *Ctx, call *mcpCall, rest bool) {
	m.load()
	// One mcp.tool_called event per tool call replaces the generic
	// request.post event of this route (initialize and list change nothing).
	markAudited(c.Context())
	key := call.mount
	if rest {
		key += "/_rest"
	}
	m.handlers[key].ServeHTTP(c.W, c.R.WithContext(context.WithValue(c.Context(), mcpCallKey{}, call)))
}

// canReach reports whether the caller may call rt at all: the route's auth
// mode and permission, with the key's scopes and the project-capped role.
func canReach(id *Identity, rt *Route) bool {
	if rt.Auth == AuthHuman && !id.Human() {
		return false
	}
	return id.Can(rt.Perm)
}

func (m *mcpMount) reachAll(id *Identity, keys []string) bool {
	for _, k := range keys {
		rt, ok := m.routes[k]
		if !ok || !canReach(id, rt) {
			return false
		}
	}
	return true
}
