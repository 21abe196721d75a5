package server_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/store"
)

// ids are the identifiers a probe plugs in: the other tenant's real ones, or
// fresh random ones. A leak is any answer to the first that differs from the
// answer to the second (or a success on a route addressed by id).
type ids struct {
	org, project, user, invitation, key, session, task, mfa, memory, agentSession string
	rule, orgRule, integration, connector                                         string
	// A webhook on task, with an event, a routing rule, the approval the
	// rule opened and the incident the alert opened.
	event, whRule, approval, incident string
}

// own are the caller's ids, for probes that put a foreign id in the body or
// query of an otherwise legitimate request.
type own struct{ org, project string }

type probeReq struct {
	method, path string
	body         any
	project      string // X-Project-ID
}

// probe builds the requests that try foreign ids on one route.
type probe func(o own, x ids) []probeReq

func one(method, path string, body any) []probeReq {
	return []probeReq{{method: method, path: path, body: body}}
}

// isolationProbes has one entry per route that takes an id (path, query,
// body or X-Project-ID). A new such route without an entry fails the sweep.
// exempt entries say why the route holds no tenant data.
var isolationProbes = mergeProbes(orgProbes, resourceProbes, eventProbes)

// mergeProbes joins the per-area probe tables (isolation_<area>_test.go);
// a route named twice is a mistake in the tables.
func mergeProbes(tables ...map[string]probe) map[string]probe {
	out := map[string]probe{}
	for _, t := range tables {
		for k, v := range t {
			if _, dup := out[k]; dup {
				panic("isolation probe listed twice: " + k)
			}
			out[k] = v
		}
	}
	return out
}

var idListNames = map[string]bool{"projects": true, "actor": true}

// takesIDs reports whether a route reads an id from its path, X-Project-ID,
// its query or its body (fields named *_id, *_ids, or id lists such as projects).
func takesIDs(rt *server.Route) bool {
	if strings.Contains(rt.Path, "{") || rt.Project {
		return true
	}
	idField := func(t reflect.Type, tag string) bool {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return false
		}
		for i := 0; i < t.NumField(); i++ {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get(tag), ",")
			if strings.HasSuffix(name, "_id") || strings.HasSuffix(name, "_ids") || idListNames[name] {
				return true
			}
		}
		return false
	}
	return (rt.Query != nil && idField(reflect.TypeOf(rt.Query), "query")) || (rt.Body != nil && idField(reflect.TypeOf(rt.Body), "json"))
}

// The isolation sweep: every id-taking route, tried with the other tenant's
// real ids by every role and by API keys, answers exactly as it does for a
// random id, never with success on an id-addressed route, and leaves the
// other tenant's data untouched.
func TestIsolationSweep(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	a := env.newTenant(t, "alpha")
	b := env.newTenant(t, "bravo")

	// Bravo's real ids, one of each kind.
	bUser := userID(t, b.byRole["member"])
	bInv := b.owner.must(201, "POST", "/api/organizations/"+b.org+"/invitations", map[string]any{"email": "pending@example.com", "role": "member"}).JSON()["id"].(string)
	bKey, bKeyRow := env.apiKey(t, b.owner, map[string]any{"name": "bravo-ci", "scopes": []string{"*"}})
	b.owner.must(201, "POST", "/api/projects/"+b.project+"/members", map[string]any{"user_id": bUser, "role": "member"})
	bSession := b.owner.must(200, "GET", "/api/auth/sessions", nil).List()[0]["id"].(string)
	bOwner := b.owner
	bOwner.Project = b.project
	bTask := bOwner.must(201, "POST", "/api/tasks", map[string]any{"name": "nightly", "prompt": "check disks", "schedule": "@daily"}).JSON()["id"].(string)
	bOwner.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": "bravo-disk.md", "content": "# Disk\nclean /var/log"})
	bMemory := bOwner.must(201, "POST", "/api/memories", map[string]any{"key": "db.primary", "text": "db1 is primary"}).JSON()["id"].(string)
	bOwner.must(200, "PUT", "/api/secrets/BRAVO_TOKEN", map[string]any{"value": "bravo-secret-value"})
	bOwner.must(200, "PUT", "/api/org-secrets/BRAVO_ORG_TOKEN", map[string]any{"value": "bravo-org-secret"})
	// An agent session: without an LLM the chat fails fast, but the session is kept.
	bAgentSession := bOwner.must(200, "POST", "/api/chat", map[string]any{"message": "check disks", "name": "bravo-chat"}).Header.Get("X-Session-ID")
	if !store.ValidID(bAgentSession) {
		t.Fatalf("chat did not name its session: %q", bAgentSession)
	}
	bRule := bOwner.must(201, "POST", "/api/rules", map[string]any{"kind": "must_never", "description": "no rm", "tool": "run_command", "match_type": "glob", "pattern": "rm *"}).JSON()["id"].(string)
	bIntegration := bOwner.must(201, "POST", "/api/integrations", map[string]any{"kind": "prometheus", "name": "main", "base_url": "http://10.0.0.5:9090"}).JSON()["id"].(string)
	bConnector := bOwner.must(201, "POST", "/api/connectors", map[string]any{"name": "db-1"}).JSON()["id"].(string)
	bHook := bravoWebhook(t, env, bOwner, bTask)
	bOwner.Project = ""
	bOrgRule := bOwner.must(201, "POST", "/api/org-rules", map[string]any{"kind": "must_always", "description": "link the runbook"}).JSON()["id"].(string)
	bMember := b.byRole["member"]
	enrolTOTP(t, env, bMember)
	bMFA := bMember.must(200, "GET", "/api/auth/mfa/methods", nil).List()[0]["id"].(string)
	real := ids{org: b.org, project: b.project, user: bUser, invitation: bInv, key: bKeyRow["id"].(string), session: bSession, task: bTask, mfa: bMFA, memory: bMemory,
		agentSession: bAgentSession, rule: bRule, orgRule: bOrgRule, integration: bIntegration, connector: bConnector,
		event: bHook.event, whRule: bHook.rule, approval: bHook.approval, incident: bHook.incident}
	random := func() ids {
		return ids{org: store.NewID(), project: store.NewID(), user: store.NewID(), invitation: store.NewID(), key: store.NewID(),
			session: store.NewID(), task: store.NewID(), mfa: store.NewID(), memory: store.NewID(), agentSession: store.NewID(),
			rule: store.NewID(), orgRule: store.NewID(), integration: store.NewID(), connector: store.NewID(),
			event: store.NewID(), whRule: store.NewID(), approval: store.NewID(), incident: store.NewID()}
	}

	callers := map[string]*client{}
	for role, c := range a.byRole {
		callers[role] = c
	}
	callers["key:*"], _ = env.apiKey(t, a.owner, map[string]any{"name": "all", "scopes": []string{"*"}})
	callers["key:scoped"], _ = env.apiKey(t, a.owner, map[string]any{"name": "scoped", "scopes": []string{"projects:read", "projects:admin", "projects:write", "org:read", "audit:read"}, "projects": []string{a.project}})
	o := own{org: a.org, project: a.project}

	seen := map[string]bool{}
	probed := 0
	for _, rt := range env.Srv.Routes() {
		name := rt.Method + " " + rt.Path
		seen[name] = true
		if !takesIDs(rt) {
			continue
		}
		p, ok := isolationProbes[name]
		if !ok {
			t.Errorf("route %s takes an id but has no isolation probe: add one to isolationProbes", name)
			continue
		}
		if p == nil {
			continue
		}
		for who, c := range callers {
			ctrlIDs := random()
			reqs, ctrl := p(o, real), p(o, ctrlIDs)
			for i, rq := range reqs {
				got := send(c, rq)
				want := send(c, ctrl[i])
				probed++
				// Ids echoed back (bulk results list what was not found) are
				// compared as placeholders.
				gotBody, wantBody := got.Body, want.Body
				gotBody = maskIDs(gotBody, real)
				wantBody = maskIDs(wantBody, ctrlIDs)
				byID := rq.project == real.project || pathHasID(rq.path, real)
				if got.Status != want.Status || !bytes.Equal(gotBody, wantBody) {
					t.Errorf("LEAK %s as %s: %s %s answered %d %s; a random id answers %d %s", name, who, rq.method, rq.path, got.Status, got.Body, want.Status, want.Body)
				}
				if byID && got.Status < 300 {
					t.Errorf("LEAK %s as %s: %s %s succeeded (%d) with a foreign id", name, who, rq.method, rq.path, got.Status)
				}
			}
		}
	}
	for name := range isolationProbes {
		if !seen[name] {
			t.Errorf("isolation probe for %s names no route; remove or rename it", name)
		}
	}
	t.Logf("%d foreign-id requests, every one answered like a random id", probed)

	// Bravo is untouched.
	c := b.owner
	if n := c.must(200, "GET", "/api/organizations/"+b.org, nil).JSON()["name"]; n == "pwned" {
		t.Fatal("bravo renamed")
	}
	if p := c.must(200, "GET", "/api/projects/"+b.project, nil).JSON(); p["name"] == "pwned" {
		t.Fatal("bravo project renamed")
	}
	if ms := c.must(200, "GET", "/api/organizations/"+b.org+"/members", nil).List(); len(ms) != 4 {
		t.Fatalf("bravo members: %v", ms)
	}
	if ms := c.must(200, "GET", "/api/projects/"+b.project+"/members", nil).List(); len(ms) != 1 {
		t.Fatalf("bravo project members: %v", ms)
	}
	for _, inv := range c.must(200, "GET", "/api/organizations/"+b.org+"/invitations", nil).List() {
		if inv["id"] == bInv && inv["status"] != "pending" {
			t.Fatalf("bravo invitation: %v", inv)
		}
	}
	bKey.must(200, "GET", "/api/auth/me", nil)
	c.Project = b.project
	if got := c.must(200, "GET", "/api/tasks/"+bTask, nil).JSON()["name"]; got != "nightly" {
		t.Fatalf("bravo task changed: name %v", got)
	}
	bHook.untouched(t, c)
	c.Project = ""
	c.must(200, "GET", "/api/auth/sessions", nil)
}

// idList lists every id of x.
func idList(x ids) []string {
	return []string{x.org, x.project, x.user, x.invitation, x.key, x.session, x.task, x.mfa, x.memory, x.agentSession,
		x.rule, x.orgRule, x.integration, x.connector, x.event, x.whRule, x.approval, x.incident}
}

// maskIDs replaces the probe's ids in a body with a placeholder.
func maskIDs(b []byte, x ids) []byte {
	for _, id := range idList(x) {
		b = bytes.ReplaceAll(b, []byte(id), []byte("<id>"))
	}
	return b
}

// pathHasID reports whether the request path addresses one of x's ids.
func pathHasID(path string, x ids) bool {
	path, _, _ = strings.Cut(path, "?") // a filter may match nothing and succeed
	for _, id := range idList(x) {
		if strings.Contains(path, id) {
			return true
		}
	}
	return false
}

// inProject sends a project-scoped request with the other tenant's project.
func inProject(x ids, method, path string, body any) []probeReq {
	return []probeReq{{method: method, path: path, body: body, project: x.project}}
}

// bothProjects sends the same request from the caller's project and the other tenant's.
func bothProjects(o own, x ids, method, path string, body any) []probeReq {
	return []probeReq{{method: method, path: path, body: body, project: o.project}, {method: method, path: path, body: body, project: x.project}}
}

// taskProbe addresses the other tenant's task from the caller's own project
// and from the other tenant's project.
func taskProbe(o own, x ids, method, suffix string, body any) []probeReq {
	p := "/api/tasks/" + x.task + suffix
	return []probeReq{{method: method, path: p, body: body, project: o.project}, {method: method, path: p, body: body, project: x.project}}
}

// projectAndForeign addresses an id from the caller's own project and from
// the other tenant's project.
func projectAndForeign(o own, x ids, method, path string, body any) []probeReq {
	return []probeReq{{method: method, path: path, body: body, project: o.project}, {method: method, path: path, body: body, project: x.project}}
}

func send(c *client, rq probeReq) *resp {
	c.env.t.Helper()
	saved := c.Project
	c.Project = rq.project
	defer func() { c.Project = saved }()
	return c.do(rq.method, rq.path, rq.body)
}
