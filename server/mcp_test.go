package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/store"
)

// bearerTransport adds a credential to every request of the MCP client, as
// an MCP host configured with a static header does.
type bearerTransport struct {
	token string
	host  string // optional Host header (a reverse proxy in front)
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	if b.host != "" {
		r.Host = b.host
	}
	return http.DefaultTransport.RoundTrip(r)
}

// mcpConnect opens a go-sdk client session on path with c's credential.
// version "" is the SDK's latest revision (stateless server/discover);
// an older one makes it initialize like a 2025 client.
func mcpConnect(t *testing.T, env *testEnv, token, path, version string) (*mcp.ClientSession, error) {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: env.URL + path, HTTPClient: &http.Client{Transport: bearerTransport{token: token}, Timeout: 30 * time.Second},
		DisableStandaloneSSE: true, MaxRetries: -1}
	cl := mcp.NewClient(&mcp.Implementation{Name: "opsagent-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := cl.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err == nil {
		t.Cleanup(func() { _ = s.Close() })
	}
	return s, err
}

func mustConnect(t *testing.T, env *testEnv, token, path, version string) *mcp.ClientSession {
	t.Helper()
	s, err := mcpConnect(t, env, token, path, version)
	if err != nil {
		t.Fatalf("connect %s: %v", path, err)
	}
	return s
}

func toolNames(t *testing.T, s *mcp.ClientSession) []string {
	t.Helper()
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	if res.CacheScope != "private" && s.InitializeResult().ProtocolVersion >= "2026-07-28" {
		t.Fatalf("tools/list cache scope %q: a list cut to one caller must not be shared", res.CacheScope)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		if tl.InputSchema == nil || tl.Description == "" {
			t.Fatalf("tool %s lacks a schema or description", tl.Name)
		}
	}
	return names
}

func callTool(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return res, text.String()
}

// mcpFixture is one org with a project holding a task and a runbook, and
// another tenant with a project of its own.
type mcpFixture struct {
	env            *testEnv
	owner          *client
	org, project   string
	task           string
	other          *client
	otherProject   string
	otherTask      string
	sibling        string // a second project of the owner's org
	ownerToken     string
	projectMount   string
	restMount      string
	otherMountPath string
}

func newMCPFixture(t *testing.T) *mcpFixture {
	env := newEnv(t, openSignup)
	f := &mcpFixture{env: env}
	f.owner = env.register("mcp-owner@example.com")
	f.org = orgOf(t, f.owner)
	f.project = f.owner.must(201, "POST", "/api/projects", map[string]any{"name": "prod"}).JSON()["id"].(string)
	f.sibling = f.owner.must(201, "POST", "/api/projects", map[string]any{"name": "staging"}).JSON()["id"].(string)
	f.owner.Project = f.project
	f.task = f.owner.must(201, "POST", "/api/tasks", map[string]any{"name": "disk check", "prompt": "check the disks"}).JSON()["id"].(string)
	f.owner.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": "disk-full.md",
		"content": "# Disk full\nRotate the logs under /var/log and clear the journal."})
	f.owner.Project = ""
	f.other = env.register("mcp-other@example.com")
	f.otherProject = f.other.must(201, "POST", "/api/projects", map[string]any{"name": "theirs"}).JSON()["id"].(string)
	f.other.Project = f.otherProject
	f.otherTask = f.other.must(201, "POST", "/api/tasks", map[string]any{"name": "secret task", "prompt": "p"}).JSON()["id"].(string)
	f.other.Project = ""
	f.ownerToken = f.owner.Token
	f.projectMount = "/api/mcp/" + f.project
	f.restMount = f.projectMount + "/_rest"
	return f
}

func TestMCPProjectCuratedTools(t *testing.T) {
	f := newMCPFixture(t)
	t.Parallel()
	for _, version := range []string{"", "2025-06-18"} {
		s := mustConnect(t, f.env, f.ownerToken, f.projectMount, version)
		init := s.InitializeResult()
		if init == nil || init.ServerInfo == nil || init.ServerInfo.Name != "opsagent" || !strings.Contains(init.Instructions, f.project) {
			t.Fatalf("version %q: initialize result %+v", version, init)
		}
		names := toolNames(t, s)
		for _, want := range []string{"search_knowledge", "read_document", "recall_memories", "list_sessions", "read_session",
			"list_approvals", "approve", "deny", "list_incidents", "read_incident", "read_findings", "list_tasks", "trigger_task"} {
			if !slices.Contains(names, want) {
				t.Fatalf("version %q: tools %v lack %s", version, names, want)
			}
		}
	}
	s := mustConnect(t, f.env, f.ownerToken, f.projectMount, "")
	res, text := callTool(t, s, "search_knowledge", map[string]any{"query": "disk full logs"})
	if res.IsError || !strings.Contains(text, "disk-full.md") {
		t.Fatalf("search_knowledge: error %v, %s", res.IsError, text)
	}
	res, text = callTool(t, s, "read_document", map[string]any{"collection": "runbooks", "name": "disk-full.md"})
	if res.IsError || !strings.Contains(text, "Rotate the logs") {
		t.Fatalf("read_document: %s", text)
	}
	res, text = callTool(t, s, "list_tasks", map[string]any{"search": "disk"})
	if res.IsError || !strings.Contains(text, f.task) {
		t.Fatalf("list_tasks: %s", text)
	}
	// A run starts at once (without an LLM it fails fast, but it is recorded).
	res, text = callTool(t, s, "trigger_task", map[string]any{"task_id": f.task, "idempotency_key": "mcp-run-1"})
	if res.IsError {
		t.Fatalf("trigger_task: %s", text)
	}
	run, _ := res.StructuredContent.(map[string]any)
	sessionID, _ := run["session_id"].(string)
	if !store.ValidID(sessionID) || run["replayed"] != false {
		t.Fatalf("trigger_task structured content: %v", res.StructuredContent)
	}
	// The same key answers the same run: the REST route's Idempotency-Key.
	res, _ = callTool(t, s, "trigger_task", map[string]any{"task_id": f.task, "idempotency_key": "mcp-run-1"})
	if again, _ := res.StructuredContent.(map[string]any); again["session_id"] != sessionID || again["replayed"] != true {
		t.Fatalf("retried trigger: %v", res.StructuredContent)
	}
	res, text = callTool(t, s, "read_session", map[string]any{"session_id": sessionID, "include_transcript": true})
	joined, _ := res.StructuredContent.(map[string]any)
	if res.IsError || joined["session"] == nil || joined["transcript"] == nil {
		t.Fatalf("read_session: %s", text)
	}
	// Errors of the REST route come back as tool errors a model can read.
	res, text = callTool(t, s, "read_incident", map[string]any{"incident_id": store.NewID()})
	if !res.IsError || !strings.Contains(text, "404") {
		t.Fatalf("read_incident of a random id: error %v, %s", res.IsError, text)
	}
	res, text = callTool(t, s, "list_sessions", map[string]any{"limit": 500})
	if !res.IsError || !strings.Contains(text, "422") || !strings.Contains(text, "limit") {
		t.Fatalf("list_sessions limit 500: %s", text)
	}
	// The schema is checked before the route: a string where an id belongs.
	if res, _ = callTool(t, s, "read_incident", map[string]any{"incident_id": 7}); !res.IsError {
		t.Fatal("read_incident with a number id succeeded")
	}
	res, text = callTool(t, s, "list_approvals", nil)
	if res.IsError || !strings.Contains(text, `"items"`) {
		t.Fatalf("list_approvals: %s", text)
	}
}

func TestMCPRestBridge(t *testing.T) {
	f := newMCPFixture(t)
	t.Parallel()
	s := mustConnect(t, f.env, f.ownerToken, f.restMount, "2025-11-25")
	names := toolNames(t, s)
	// Every project route tagged MCP is a tool, named by its operation id.
	var want []string
	for _, rt := range f.env.Srv.Routes() {
		if rt.MCP && rt.Project {
			want = append(want, strings.ToLower(rt.Method)+strings.NewReplacer("/", "_", "{", "", "}", "", "-", "_", ".", "_").Replace(strings.TrimPrefix(rt.Path, "/api")))
		}
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("bridged tools\n got %v\nwant %v", names, want)
	}
	res, text := callTool(t, s, "get_tasks_task_id", map[string]any{"task_id": f.task})
	if res.IsError || res.StructuredContent.(map[string]any)["name"] != "disk check" {
		t.Fatalf("get_tasks_task_id: %s", text)
	}
	// Body fields are top-level arguments; the route validates them.
	res, text = callTool(t, s, "patch_tasks_task_id", map[string]any{"task_id": f.task, "description": "nightly disk check"})
	if res.IsError || res.StructuredContent.(map[string]any)["description"] != "nightly disk check" {
		t.Fatalf("patch_tasks_task_id: %s", text)
	}
	res, text = callTool(t, s, "post_tasks", map[string]any{"name": "", "prompt": "x"})
	if !res.IsError || !strings.Contains(text, "422") || !strings.Contains(text, `"name"`) {
		t.Fatalf("post_tasks with an empty name: %s", text)
	}
	res, text = callTool(t, s, "get_tasks", map[string]any{"enabled": true, "limit": 5})
	if res.IsError || res.StructuredContent.(map[string]any)["limit"] != 5.0 {
		t.Fatalf("get_tasks: %s", text)
	}
	// A write: the memory is saved, and recall_memories (curated) finds it.
	res, text = callTool(t, s, "post_memories", map[string]any{"key": "db.primary", "text": "db1 is the primary", "tags": []string{"db"}})
	if res.IsError || res.StructuredContent.(map[string]any)["key"] != "db.primary" {
		t.Fatalf("post_memories: %s", text)
	}
	cur := mustConnect(t, f.env, f.ownerToken, f.projectMount, "")
	if res, text = callTool(t, cur, "recall_memories", map[string]any{"query": "primary"}); res.IsError || !strings.Contains(text, "db1 is the primary") {
		t.Fatalf("recall_memories: %s", text)
	}
	if res, text = callTool(t, s, "get_tasks", map[string]any{"limt": 5}); !res.IsError || !strings.Contains(text, "limt") {
		t.Fatalf("a misspelt argument was accepted: %s", text)
	}
	// Path values stay in their segment.
	if res, _ = callTool(t, s, "get_sessions_detail_session_id", map[string]any{"session_id": "../../auth/me"}); !res.IsError {
		t.Fatal("a path value left its segment")
	}
	// Another tenant's task: the same answer as a random id.
	_, foreign := callTool(t, s, "get_tasks_task_id", map[string]any{"task_id": f.otherTask})
	_, random := callTool(t, s, "get_tasks_task_id", map[string]any{"task_id": store.NewID()})
	if foreign != random || !strings.Contains(foreign, "404") {
		t.Fatalf("foreign task: %q; random: %q", foreign, random)
	}
	// The schema of a bridged route comes from the OpenAPI generator.
	list, _ := s.ListTools(context.Background(), nil)
	for _, tl := range list.Tools {
		if tl.Name != "get_tasks" {
			continue
		}
		b, _ := json.Marshal(tl.InputSchema)
		if !strings.Contains(string(b), `"maximum":200`) || !strings.Contains(string(b), `"created_desc"`) {
			t.Fatalf("get_tasks schema: %s", b)
		}
	}
}

func TestMCPPermissionsAndTenancy(t *testing.T) {
	f := newMCPFixture(t)
	t.Parallel()
	env := f.env
	// A key that may read tasks in one project only.
	reader, row := env.apiKey(t, f.owner, map[string]any{"name": "mcp-reader", "scopes": []string{"tasks:read"}, "projects": []string{f.project}})
	keyID := row["id"].(string)
	s := mustConnect(t, env, reader.Token, f.restMount, "")
	names := toolNames(t, s)
	if !slices.Contains(names, "get_tasks") || slices.Contains(names, "post_tasks_task_id_trigger") || slices.Contains(names, "get_sessions_index") {
		t.Fatalf("tools of a tasks:read key: %v", names)
	}
	// Calling a tool it does not list gets the REST route's own refusal.
	res, text := callTool(t, s, "post_tasks_task_id_trigger", map[string]any{"task_id": f.task})
	if !res.IsError || !strings.Contains(text, "403") || !strings.Contains(text, "tasks:run") {
		t.Fatalf("trigger with tasks:read: %s", text)
	}
	cs := mustConnect(t, env, reader.Token, f.projectMount, "")
	if names := toolNames(t, cs); !slices.Contains(names, "list_tasks") || slices.Contains(names, "trigger_task") || slices.Contains(names, "approve") {
		t.Fatalf("curated tools of a tasks:read key: %v", names)
	}
	res, _ = callTool(t, cs, "trigger_task", map[string]any{"task_id": f.task})
	if !res.IsError {
		t.Fatal("trigger_task succeeded for a tasks:read key")
	}
	// Unknown tool names are refused by the protocol, and audited.
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool"}); err == nil {
		t.Fatal("an unknown tool was called")
	}

	// The mount of a project outside the key's allow-list, of another tenant,
	// or of no project at all: the same 404, before any MCP exchange.
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	random := store.NewID()
	for _, tc := range []struct {
		who     *client
		project string
	}{{reader, f.sibling}, {reader, f.otherProject}, {f.owner, f.otherProject}} {
		for _, suffix := range []string{"", "/_rest"} {
			got := mcpPost(tc.who, "/api/mcp/"+tc.project+suffix, body)
			want := mcpPost(tc.who, "/api/mcp/"+random+suffix, body)
			if got.Status != 404 || got.Status != want.Status || string(got.Body) != string(want.Body) {
				t.Fatalf("mount of %s: %d %s; random %d %s", tc.project, got.Status, got.Body, want.Status, want.Body)
			}
		}
		if _, err := mcpConnect(t, env, tc.who.Token, "/api/mcp/"+tc.project, ""); err == nil {
			t.Fatalf("connected to the mount of %s", tc.project)
		}
	}
	if r := mcpPost(f.owner, "/api/mcp/not-a-uuid", body); r.Status != 404 {
		t.Fatalf("non-uuid mount: %d", r.Status)
	}
	// No credential: 401 with the REST challenge; a bad one likewise.
	anon := env.newClient()
	if r := mcpPost(anon, f.projectMount, body); r.Status != 401 || r.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("anonymous: %d %v", r.Status, r.Header)
	}
	anon.Token = "opsk_000000000000_forged"
	if r := mcpPost(anon, f.restMount, body); r.Status != 401 {
		t.Fatalf("forged key: %d", r.Status)
	}
	// Stateless: no GET stream; a body over 1 MiB is refused before parsing.
	f.owner.Header.Set("Accept", "application/json, text/event-stream")
	if r := f.owner.do("GET", f.projectMount, nil); r.Status != 405 {
		t.Fatalf("GET on the mount: %d", r.Status)
	}
	f.owner.Header.Del("Accept")
	huge := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_knowledge","arguments":{"query":"` + strings.Repeat("a", 1<<20) + `"}}}`
	if r := mcpPost(f.owner, f.projectMount, huge); r.Status != 413 {
		t.Fatalf("2 MiB MCP request: %d", r.Status)
	}
	// A revoked key stops at once.
	f.owner.must(204, "DELETE", "/api/api-keys/"+keyID, nil)
	if _, err := mcpConnect(t, env, reader.Token, f.projectMount, ""); err == nil {
		t.Fatal("a revoked key connected")
	}

	// Every tool call above left mcp.tool_called, with tool and outcome.
	events := f.owner.must(200, "GET", "/api/audit-logs?action=mcp.tool_called&limit=200", nil).JSON()["items"].([]any)
	outcomes := map[string]string{}
	for _, e := range events {
		ev := e.(map[string]any)
		d := ev["detail"].(map[string]any)
		if ev["target_id"] != d["tool"] || ev["target_type"] != "mcp_tool" {
			t.Fatalf("event %v", ev)
		}
		if ev["actor_key_id"] == keyID {
			outcomes[d["tool"].(string)+"/"+d["surface"].(string)] = ev["outcome"].(string)
			if ev["project_id"] != f.project {
				t.Fatalf("event without its project: %v", ev)
			}
		}
	}
	for tool, want := range map[string]string{"post_tasks_task_id_trigger/rest": "denied", "trigger_task/curated": "denied", "no_such_tool/unknown": "failure"} {
		if outcomes[tool] != want {
			t.Fatalf("audit outcome of %s: %q, want %q (all: %v)", tool, outcomes[tool], want, outcomes)
		}
	}
	// The REST route's own denial was audited too.
	if n := len(f.owner.must(200, "GET", "/api/audit-logs?action=permission.denied&actor="+keyID, nil).JSON()["items"].([]any)); n == 0 {
		t.Fatal("the refused route wrote no permission.denied event")
	}
}

func TestMCPOrgMounts(t *testing.T) {
	f := newMCPFixture(t)
	t.Parallel()
	s := mustConnect(t, f.env, f.ownerToken, "/api/mcp/_org", "")
	names := toolNames(t, s)
	for _, want := range []string{"whoami", "list_projects", "list_members", "search_audit_log", "org_usage"} {
		if !slices.Contains(names, want) {
			t.Fatalf("org tools %v lack %s", names, want)
		}
	}
	if res, text := callTool(t, s, "list_projects", nil); res.IsError || !strings.Contains(text, f.sibling) || strings.Contains(text, f.otherProject) {
		t.Fatalf("list_projects: %s", text)
	}
	if res, text := callTool(t, s, "list_members", nil); res.IsError || !strings.Contains(text, "mcp-owner@example.com") {
		t.Fatalf("list_members: %s", text)
	}
	if res, text := callTool(t, s, "whoami", nil); res.IsError || !strings.Contains(text, f.org) {
		t.Fatalf("whoami: %s", text)
	}
	rest := mustConnect(t, f.env, f.ownerToken, "/api/mcp/_org/_rest", "")
	names = toolNames(t, rest)
	var want []string
	for _, rt := range f.env.Srv.Routes() {
		if rt.MCP && !rt.Project && rt.Auth != server.AuthNone {
			want = append(want, strings.ToLower(rt.Method)+strings.NewReplacer("/", "_", "{", "", "}", "", "-", "_", ".", "_").Replace(strings.TrimPrefix(rt.Path, "/api")))
		}
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("org bridged tools\n got %v\nwant %v", names, want)
	}
	if !slices.Contains(names, "get_organizations_org_id") || !slices.Contains(names, "get_projects") || slices.Contains(names, "get_tasks") {
		t.Fatalf("org REST tools: %v", names)
	}
	// {org_id} is the credential's org: not an argument, so no other org is reachable.
	res, text := callTool(t, rest, "get_organizations_org_id", nil)
	if res.IsError || res.StructuredContent.(map[string]any)["id"] != f.org {
		t.Fatalf("get_organizations_org_id: %s", text)
	}
	if res, _ := callTool(t, rest, "get_organizations_org_id", map[string]any{"org_id": orgOf(t, f.other)}); !res.IsError {
		t.Fatal("org_id was accepted as an argument")
	}
	// A key without audit:read sees no audit tool on either org mount.
	key, _ := f.env.apiKey(t, f.owner, map[string]any{"name": "org-reader", "scopes": []string{"projects:read", "org:read"}})
	ks := mustConnect(t, f.env, key.Token, "/api/mcp/_org", "")
	if names := toolNames(t, ks); slices.Contains(names, "search_audit_log") || !slices.Contains(names, "list_projects") {
		t.Fatalf("org tools of a scoped key: %v", names)
	}
	// Behind a reverse proxy on the same host the Host header is public.
	tr := &mcp.StreamableClientTransport{Endpoint: f.env.URL + "/api/mcp/_org",
		HTTPClient: &http.Client{Transport: bearerTransport{token: f.ownerToken, host: "ops.example.com"}}, DisableStandaloneSSE: true}
	ps, err := mcp.NewClient(&mcp.Implementation{Name: "proxied", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("connect with a public Host header over loopback: %v", err)
	}
	defer ps.Close()
	if _, text := callTool(t, ps, "whoami", nil); !strings.Contains(text, f.org) {
		t.Fatalf("proxied whoami: %s", text)
	}
}

// mcpPost sends one raw JSON-RPC message as an MCP client would.
func mcpPost(c *client, path, body string) *resp {
	c.Header.Set("Accept", "application/json, text/event-stream")
	defer c.Header.Del("Accept")
	return c.do("POST", path, body)
}
