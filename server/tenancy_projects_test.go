package server_test

import (
	"testing"
)

// Projects per role, restricted visibility, project roles that cap, archive,
// feature flags and X-Project-ID resolution.
func TestTenancyProjects(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	tn := env.newTenant(t, "proj")
	owner, admin, member, viewer := tn.owner, tn.byRole["admin"], tn.byRole["member"], tn.byRole["viewer"]

	// Create: admins and owners only.
	member.must(403, "POST", "/api/projects", map[string]any{"name": "m"})
	viewer.must(403, "POST", "/api/projects", map[string]any{"name": "v"})
	wantValidation(t, admin.do("POST", "/api/projects", map[string]any{"name": ""}), "body", "name")
	secret := admin.must(201, "POST", "/api/projects", map[string]any{"name": "secret", "restricted": true}).JSON()["id"].(string)

	// Restricted: invisible (404, and absent from lists) to members and viewers until added.
	count := func(c *client, q string) int { return len(c.must(200, "GET", "/api/projects"+q, nil).List()) }
	if count(owner, "") != 2 || count(member, "") != 1 || count(viewer, "") != 1 {
		t.Fatalf("visible: owner %d member %d viewer %d", count(owner, ""), count(member, ""), count(viewer, ""))
	}
	member.must(404, "GET", "/api/projects/"+secret, nil)
	member.Project = secret
	member.must(404, "GET", "/api/projects/current", nil)
	member.Project = ""
	mid := userID(t, member)
	member.must(403, "POST", "/api/projects/"+tn.project+"/members", map[string]any{"user_id": mid, "role": "viewer"})
	admin.must(201, "POST", "/api/projects/"+secret+"/members", map[string]any{"user_id": mid, "role": "viewer"})
	admin.must(409, "POST", "/api/projects/"+secret+"/members", map[string]any{"user_id": mid, "role": "viewer"})
	wantValidation(t, admin.do("POST", "/api/projects/"+secret+"/members", map[string]any{"user_id": mid, "role": "boss"}), "body", "role")
	member.must(200, "GET", "/api/projects/"+secret, nil)
	// A project viewer role caps the org member: read-only there, not elsewhere.
	member.must(403, "PATCH", "/api/projects/"+secret, map[string]any{"description": "x"})
	member.must(200, "PATCH", "/api/projects/"+tn.project, map[string]any{"description": "x"})
	admin.must(200, "PATCH", "/api/projects/"+secret+"/members/"+mid, map[string]any{"role": "member"})
	member.must(200, "PATCH", "/api/projects/"+secret, map[string]any{"description": "x"})
	if ms := viewer.do("GET", "/api/projects/"+secret+"/members", nil); ms.Status != 404 {
		t.Fatalf("viewer sees restricted members: %d", ms.Status)
	}
	// Archive and restrict need projects:admin.
	member.must(403, "PATCH", "/api/projects/"+tn.project, map[string]any{"archived": true})
	r := admin.must(200, "PATCH", "/api/projects/"+tn.project, map[string]any{"archived": true})
	if r.JSON()["archived"] != true {
		t.Fatalf("archive: %s", r.Body)
	}
	if count(owner, "") != 1 || count(owner, "?include_archived=true") != 2 {
		t.Fatal("archived project still listed by default")
	}
	wantValidation(t, owner.do("GET", "/api/projects?include_archived=maybe", nil), "query", "include_archived")
	// Feature flags.
	wantValidation(t, admin.do("PATCH", "/api/projects/"+secret, map[string]any{"feature_flags": map[string]any{"teleport": true}}), "body", "feature_flags", "teleport")
	admin.must(200, "PATCH", "/api/projects/"+secret, map[string]any{"feature_flags": map[string]any{"webhooks": false}})
	flags := member.must(200, "GET", "/api/projects/"+secret+"/feature-flags", nil).JSON()["flags"].(map[string]any)
	if flags["webhooks"] != false || flags["tasks"] != true {
		t.Fatalf("flags: %v", flags)
	}
	// X-Project-ID: not a uuid 422, missing 422, visible 200.
	owner.Project = "nope"
	wantValidation(t, owner.do("GET", "/api/projects/current", nil), "header", "x-project-id")
	owner.Project = ""
	wantValidation(t, owner.do("GET", "/api/projects/current", nil), "header", "x-project-id")
	owner.Project = secret
	if id := owner.must(200, "GET", "/api/projects/current", nil).JSON()["id"]; id != secret {
		t.Fatalf("current: %v", id)
	}
	// Removing project access hides it again; deleting needs projects:admin.
	admin.must(204, "DELETE", "/api/projects/"+secret+"/members/"+mid, nil)
	member.must(404, "GET", "/api/projects/"+secret, nil)
	member.must(403, "DELETE", "/api/projects/"+tn.project, nil)
	owner.must(204, "DELETE", "/api/projects/"+secret, nil)
	owner.must(404, "GET", "/api/projects/"+secret, nil)
}

// Onboarding: bootstrap with Idempotency-Key creates once and replays the
// same answer; status, skip and complete.
func TestTenancyOnboarding(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	c := env.register("new@example.com")
	if s := c.must(200, "GET", "/api/onboarding/status", nil).JSON(); s["status"] != "pending" {
		t.Fatalf("status: %v", s)
	}
	c.must(200, "POST", "/api/onboarding/skip", nil)
	body := map[string]any{"org_name": "Acme Ops", "project_name": "production"}
	wantValidation(t, c.do("POST", "/api/onboarding/bootstrap", map[string]any{"org_name": "x"}), "body", "project_name")
	wantValidation(t, c.do("POST", "/api/onboarding/bootstrap", map[string]any{"org_name": "x", "project_name": "y", "task_template": "disk-check"}), "body", "task_template")
	c.Header.Set("Idempotency-Key", "boot-1")
	first := c.must(200, "POST", "/api/onboarding/bootstrap", body)
	second := c.must(200, "POST", "/api/onboarding/bootstrap", body)
	if string(first.Body) != string(second.Body) || second.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay differs:\n%s\n%s", first.Body, second.Body)
	}
	c.Header.Del("Idempotency-Key")
	if ps := c.must(200, "GET", "/api/projects", nil).List(); len(ps) != 1 || ps[0]["name"] != "production" {
		t.Fatalf("projects after two bootstraps: %v", ps)
	}
	if o := c.must(200, "GET", "/api/organizations/"+orgOf(t, c), nil).JSON(); o["name"] != "Acme Ops" {
		t.Fatalf("org: %v", o)
	}
	c.Header.Set("Idempotency-Key", "boot-1")
	if r := c.must(409, "POST", "/api/onboarding/bootstrap", map[string]any{"org_name": "Other", "project_name": "p"}); r.JSON()["code"] != "idempotency_key_reused" {
		t.Fatalf("key reuse: %s", r.Body)
	}
	c.Header.Set("Idempotency-Key", "boot-2")
	if r := c.must(409, "POST", "/api/onboarding/bootstrap", body); r.JSON()["code"] != "already_bootstrapped" {
		t.Fatalf("second bootstrap: %s", r.Body)
	}
	c.Header.Del("Idempotency-Key")
	s := c.must(200, "GET", "/api/onboarding/status", nil).JSON()
	if s["status"] != "completed" || s["project_id"] == nil {
		t.Fatalf("status after bootstrap: %v", s)
	}
	// The same key of another user is another key.
	d := env.register("d@example.com")
	d.Header.Set("Idempotency-Key", "boot-1")
	withTask := map[string]any{"org_name": "Acme Ops", "project_name": "production", "task_template": "disk-pressure"}
	r := d.must(200, "POST", "/api/onboarding/bootstrap", withTask)
	if r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatal("replayed another user's response")
	}
	// The first task comes from the template, in the new project.
	out := r.JSON()
	taskID, _ := out["task_id"].(string)
	if taskID == "" {
		t.Fatalf("bootstrap with a template made no task: %s", r.Body)
	}
	d.Header.Del("Idempotency-Key")
	d.Project = out["project"].(map[string]any)["id"].(string)
	if task := d.must(200, "GET", "/api/tasks/"+taskID, nil).JSON(); task["template_id"] != "disk-pressure" || task["enabled"] != true {
		t.Fatalf("bootstrapped task: %v", task)
	}
}

// The OpenAPI document lists every route with its auth mode and permission,
// and the role matrix.
func TestTenancyOpenAPIPermissions(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	doc := env.newClient().must(200, "GET", "/api/openapi.json", nil).JSON()
	paths := doc["paths"].(map[string]any)
	for _, rt := range env.Srv.Routes() {
		ops, ok := paths[rt.Path].(map[string]any)
		if !ok {
			t.Errorf("%s missing from OpenAPI", rt.Path)
			continue
		}
		op, ok := ops[lower(rt.Method)].(map[string]any)
		if !ok {
			t.Errorf("%s %s missing from OpenAPI", rt.Method, rt.Path)
			continue
		}
		if op["x-auth"] == nil || (rt.Perm != "" && op["x-permission"] != string(rt.Perm)) {
			t.Errorf("%s %s: x-auth %v x-permission %v, want %q", rt.Method, rt.Path, op["x-auth"], op["x-permission"], rt.Perm)
		}
	}
	roles := doc["x-roles"].(map[string]any)
	for _, r := range []string{"owner", "admin", "member", "viewer"} {
		if roles[r] == nil {
			t.Errorf("x-roles lacks %s", r)
		}
	}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}
