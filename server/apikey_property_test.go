package server_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/opsagent/opsagent/server"
)

// keyProbe is one request whose success needs every perm in perms (and, when
// project is set, that the key's allow-list admits that project).
type keyProbe struct {
	perms   []server.Perm
	project int // 0 none, else 1-based index into the projects
	method  string
	path    func(org string, projects []string) string
	body    any
}

var keyProbes = []keyProbe{
	{perms: []server.Perm{server.PermOrgRead}, method: "GET", path: func(o string, _ []string) string { return "/api/organizations/" + o + "/members" }},
	{perms: []server.Perm{server.PermOrgWrite}, method: "PATCH", path: func(o string, _ []string) string { return "/api/organizations/" + o }, body: map[string]any{"name": "Acme"}},
	{perms: []server.Perm{server.PermOrgAdmin}, method: "GET", path: func(o string, _ []string) string { return "/api/organizations/" + o + "/invitations" }},
	// The LLM key routes are for signed-in owners only, so secrets stand in for a write above members.
	{perms: []server.Perm{server.PermSecretsWrite}, method: "PUT", path: func(string, []string) string { return "/api/org-secrets/PROBE_TOKEN" }, body: map[string]any{"value": "probe-value-1"}},
	{perms: []server.Perm{server.PermAuditRead}, method: "GET", path: func(string, []string) string { return "/api/audit-logs?limit=1" }},
	{perms: []server.Perm{server.PermProjectRead}, project: 1, method: "GET", path: func(_ string, p []string) string { return "/api/projects/" + p[0] }},
	{perms: []server.Perm{server.PermProjectRead}, project: 2, method: "GET", path: func(_ string, p []string) string { return "/api/projects/" + p[1] }},
	{perms: []server.Perm{server.PermProjectWrite}, project: 2, method: "PATCH", path: func(_ string, p []string) string { return "/api/projects/" + p[1] }, body: map[string]any{"description": "x"}},
	{perms: []server.Perm{server.PermProjectWrite, server.PermProjectAdmin}, project: 1, method: "PATCH", path: func(_ string, p []string) string { return "/api/projects/" + p[0] }, body: map[string]any{"restricted": false}},
}

type randKey struct {
	client *client
	scopes []string
	allow  []string
}

// oracle is the rule of spec section 5 written independently of the server:
// scopes ∩ the creator's current role ∩ the allow-list.
func oracle(k randKey, role string, p keyProbe, projects []string) bool {
	for _, perm := range p.perms {
		if !server.RoleHas(role, perm) {
			return false
		}
		if !slices.Contains(k.scopes, "*") && !slices.Contains(k.scopes, string(perm)) {
			return false
		}
	}
	return p.project == 0 || len(k.allow) == 0 || slices.Contains(k.allow, projects[p.project-1])
}

// Property: for random scopes, roles and allow-lists, every probe succeeds
// exactly when the oracle says so; after a demotion the new role rules from
// the next request; after removal or account deletion of the creator every
// key is refused.
func TestAPIKeyPermissionProperty(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	owner := env.register("owner@example.com")
	org := orgOf(t, owner)
	projects := []string{
		owner.must(201, "POST", "/api/projects", map[string]any{"name": "alpha"}).JSON()["id"].(string),
		owner.must(201, "POST", "/api/projects", map[string]any{"name": "beta"}).JSON()["id"].(string),
	}
	rng := rand.New(rand.NewPCG(20240611, 7))
	roles := server.Roles
	scopePool := []string{"*"}
	for _, p := range server.AllPerms() {
		scopePool = append(scopePool, string(p))
	}
	mismatches, allowed, refused := 0, 0, 0
	check := func(creator string, keys []randKey, role string) {
		for _, k := range keys {
			for _, p := range keyProbes {
				want := oracle(k, role, p, projects)
				r := k.client.do(p.method, p.path(org, projects), p.body)
				got := r.Status >= 200 && r.Status < 300
				if want {
					allowed++
				} else {
					refused++
				}
				if got != want || (!got && r.Status != 403 && r.Status != 404) {
					mismatches++
					t.Errorf("%s role=%s scopes=%v allow=%v %s %s: got %d %s, want success=%v",
						creator, role, k.scopes, k.allow, p.method, p.path(org, projects), r.Status, r.Body, want)
				}
			}
		}
	}
	for round := 0; round < 3; round++ {
		email := []string{"u0@example.com", "u1@example.com", "u2@example.com"}[round]
		role := roles[rng.IntN(len(roles))]
		u := env.invite(t, owner, org, email, role)
		uid := userID(t, u)
		var keys []randKey
		for i := 0; i < 8; i++ {
			var scopes []string
			for _, s := range scopePool {
				if rng.IntN(4) == 0 {
					scopes = append(scopes, s)
				}
			}
			if len(scopes) == 0 {
				scopes = []string{scopePool[1+rng.IntN(len(scopePool)-1)]}
			}
			var allow []string
			for _, p := range projects {
				if rng.IntN(3) == 0 {
					allow = append(allow, p)
				}
			}
			kc, _ := env.apiKey(t, u, map[string]any{"name": "k", "scopes": scopes, "projects": allow})
			keys = append(keys, randKey{client: kc, scopes: scopes, allow: allow})
		}
		check(email, keys, role)
		// Change the creator's role: it rules from the next request.
		next := roles[rng.IntN(len(roles))]
		owner.must(200, "PATCH", "/api/organizations/"+org+"/members/"+uid, map[string]any{"role": next})
		check(email, keys, next)
		// Remove (rounds 0, 1) or delete the account (round 2): every key is refused.
		if round < 2 {
			owner.must(204, "DELETE", "/api/organizations/"+org+"/members/"+uid, nil)
		} else {
			if next == "owner" {
				owner.must(200, "PATCH", "/api/organizations/"+org+"/members/"+uid, map[string]any{"role": "member"})
			}
			u.refresh()
			u.must(202, "DELETE", "/api/auth/me/account", nil)
		}
		for _, k := range keys {
			for _, p := range keyProbes {
				if r := k.client.do(p.method, p.path(org, projects), p.body); r.Status != 401 {
					mismatches++
					t.Errorf("%s gone: key got %d on %s %s, want 401", email, r.Status, p.method, p.path(org, projects))
				}
			}
		}
	}
	if allowed == 0 || refused == 0 {
		t.Fatalf("degenerate sample: %d allowed, %d refused", allowed, refused)
	}
	t.Logf("%d probes allowed, %d refused, all as the oracle said", allowed, refused)
	if mismatches > 0 {
		t.Fatalf("%d mismatches against the oracle", mismatches)
	}
}
