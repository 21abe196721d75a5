package server_test

import (
	"testing"
	"time"
)

// Members, roles and the last-owner rule, end to end per role.
func TestTenancyMembersAndRoles(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	tn := env.newTenant(t, "acme")
	path := "/api/organizations/" + tn.org

	ms := tn.owner.must(200, "GET", path+"/members", nil).List()
	if len(ms) != 4 {
		t.Fatalf("members: got %d, want 4: %v", len(ms), ms)
	}
	// Every role reads the member list; only owner and admin manage it.
	for role, c := range tn.byRole {
		c.must(200, "GET", path+"/members", nil)
		want := map[string]int{"owner": 200, "admin": 200, "member": 403, "viewer": 403}[role]
		if r := c.do("GET", path+"/invitations", nil); r.Status != want {
			t.Fatalf("%s lists invitations: got %d, want %d", role, r.Status, want)
		}
	}
	viewerID := userID(t, tn.byRole["viewer"])
	adminID := userID(t, tn.byRole["admin"])
	ownerID := userID(t, tn.owner)

	// Bad input: unknown role 422, random user 404.
	wantValidation(t, tn.owner.do("PATCH", path+"/members/"+viewerID, map[string]any{"role": "superuser"}), "body", "role")
	tn.owner.must(404, "PATCH", path+"/members/01900000-0000-7000-8000-000000000000", map[string]any{"role": "member"})
	tn.owner.must(404, "PATCH", path+"/members/not-a-uuid", map[string]any{"role": "member"})

	// A member cannot promote; an admin can, but cannot make owners or touch owners.
	tn.byRole["member"].must(403, "PATCH", path+"/members/"+viewerID, map[string]any{"role": "member"})
	r := tn.byRole["admin"].must(200, "PATCH", path+"/members/"+viewerID, map[string]any{"role": "member"})
	if r.JSON()["role"] != "member" {
		t.Fatalf("role change: %s", r.Body)
	}
	tn.byRole["admin"].must(403, "PATCH", path+"/members/"+viewerID, map[string]any{"role": "owner"})
	tn.byRole["admin"].must(403, "DELETE", path+"/members/"+ownerID, nil)

	// The last owner cannot leave, be demoted or removed.
	for _, try := range []func() *resp{
		func() *resp { return tn.owner.do("POST", path+"/leave", nil) },
		func() *resp { return tn.owner.do("PATCH", path+"/members/"+ownerID, map[string]any{"role": "admin"}) },
		func() *resp { return tn.owner.do("DELETE", path+"/members/"+ownerID, nil) },
	} {
		r := try()
		if r.Status != 409 || r.JSON()["code"] != "last_owner" {
			t.Fatalf("last owner: got %d %s, want 409 last_owner", r.Status, r.Body)
		}
	}
	// With a second owner, the first may leave.
	tn.owner.must(200, "PATCH", path+"/members/"+adminID, map[string]any{"role": "owner"})
	tn.owner.must(204, "POST", path+"/leave", nil)
	if r := tn.owner.do("GET", path+"/members", nil); r.Status != 401 && r.Status != 404 {
		t.Fatalf("after leaving: got %d, want 401/404", r.Status)
	}
	// The new owner removes the (former viewer) member: their token stops working.
	tn.byRole["admin"].must(204, "DELETE", path+"/members/"+viewerID, nil)
	if r := tn.byRole["viewer"].do("GET", "/api/projects", nil); r.Status != 401 {
		t.Fatalf("removed member: got %d, want 401", r.Status)
	}
}

// Invitations: mailed, bound to the address, single-use, expiring, revocable,
// and accepted by an existing signed-in user.
func TestTenancyInvitations(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.UseClock()
	owner := env.register("boss@example.com")
	org := orgOf(t, owner)
	path := "/api/organizations/" + org + "/invitations"

	wantValidation(t, owner.do("POST", path, map[string]any{"email": "not an address", "role": "member"}), "body", "email")
	wantValidation(t, owner.do("POST", path, map[string]any{"email": "a@example.com", "role": "god"}), "body", "role")
	r := owner.must(409, "POST", path, map[string]any{"email": "boss@example.com", "role": "member"})
	if r.JSON()["code"] != "already_member" {
		t.Fatalf("inviting a member: %s", r.Body)
	}

	// Sign-up is invite-only now (a user exists): register is 403, the invitation works.
	env.newClient().must(403, "POST", "/api/auth/register", map[string]any{"email": "new@example.com", "password": "correct horse battery"})
	inv := owner.must(201, "POST", path, map[string]any{"email": "New@Example.com", "role": "member"}).JSON()
	if inv["email"] != "new@example.com" || inv["status"] != "pending" || inv["token"] != nil {
		t.Fatalf("invite response: %v", inv)
	}
	tok := env.outboxToken(t, "new@example.com", "invited")
	anon := env.newClient()
	wantValidation(t, anon.do("POST", "/api/auth/accept-invite", map[string]any{"token": tok}), "body", "password")
	r = anon.must(201, "POST", "/api/auth/accept-invite", map[string]any{"token": tok, "password": "correct horse battery"})
	anon.Token = r.JSON()["access_token"].(string)
	me := anon.must(200, "GET", "/api/auth/me", nil).JSON()
	if me["current_org_id"] != org || me["role"] != "member" || me["email_verified"] != true {
		t.Fatalf("invited account: %v", me)
	}
	// No personal org: the account joined the inviting org.
	if orgs := anon.must(200, "GET", "/api/auth/orgs", nil).List(); len(orgs) != 1 {
		t.Fatalf("orgs of invited account: %v", orgs)
	}
	// Single use.
	r = env.newClient().must(400, "POST", "/api/auth/accept-invite", map[string]any{"token": tok, "password": "correct horse battery"})
	if r.JSON()["code"] != "invitation_used" {
		t.Fatalf("reuse: %s", r.Body)
	}
	env.newClient().must(400, "POST", "/api/auth/accept-invite", map[string]any{"token": "garbage", "password": "correct horse battery"})

	// Expiry.
	owner.must(201, "POST", path, map[string]any{"email": "late@example.com", "role": "viewer"})
	late := env.outboxToken(t, "late@example.com", "invited")
	env.Advance(8 * 24 * time.Hour)
	owner.refresh()
	anon.refresh()
	r = env.newClient().must(400, "POST", "/api/auth/accept-invite", map[string]any{"token": late, "password": "correct horse battery"})
	if r.JSON()["code"] != "invitation_expired" {
		t.Fatalf("expired: %s", r.Body)
	}

	// Revocation.
	inv = owner.must(201, "POST", path, map[string]any{"email": "gone@example.com", "role": "viewer"}).JSON()
	gone := env.outboxToken(t, "gone@example.com", "invited")
	owner.must(204, "DELETE", path+"/"+inv["id"].(string), nil)
	r = env.newClient().must(400, "POST", "/api/auth/accept-invite", map[string]any{"token": gone, "password": "correct horse battery"})
	if r.JSON()["code"] != "invitation_revoked" {
		t.Fatalf("revoked: %s", r.Body)
	}
	list := owner.must(200, "GET", path, nil).List()
	statuses := map[string]string{}
	for _, i := range list {
		statuses[i["email"].(string)] = i["status"].(string)
	}
	if statuses["new@example.com"] != "accepted" || statuses["late@example.com"] != "expired" || statuses["gone@example.com"] != "revoked" {
		t.Fatalf("statuses: %v", statuses)
	}

	// An existing account: signed out is 409; signed in as another address is 403; as itself it joins.
	other := env.invite(t, owner, org, "other@example.com", "viewer")
	otherOrg := other.must(201, "POST", "/api/organizations", map[string]any{"name": "Other Co"}).JSON()["id"].(string)
	other.Token = other.must(200, "POST", "/api/auth/switch-org/"+otherOrg, nil).JSON()["access_token"].(string)
	other.must(201, "POST", "/api/organizations/"+otherOrg+"/invitations", map[string]any{"email": "boss@example.com", "role": "admin"})
	bossTok := env.outboxToken(t, "boss@example.com", "invited")
	r = env.newClient().must(409, "POST", "/api/auth/accept-invite", map[string]any{"token": bossTok, "password": "correct horse battery"})
	if r.JSON()["code"] != "account_exists" {
		t.Fatalf("existing account signed out: %s", r.Body)
	}
	r = anon.must(403, "POST", "/api/auth/accept-invite", map[string]any{"token": bossTok})
	if r.JSON()["code"] != "invitation_email_mismatch" {
		t.Fatalf("mismatch: %s", r.Body)
	}
	old := owner.Token
	r = owner.must(201, "POST", "/api/auth/accept-invite", map[string]any{"token": bossTok})
	owner.Token = r.JSON()["access_token"].(string)
	if me := owner.must(200, "GET", "/api/auth/me", nil).JSON(); me["current_org_id"] != otherOrg || me["role"] != "admin" {
		t.Fatalf("joined: %v", me)
	}
	stale := env.newClient()
	stale.Token = old
	stale.must(401, "GET", "/api/auth/me", nil)
}

// switch-org: member only, old token revoked, cookie set; orgs lists roles.
func TestTenancySwitchOrg(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	a := env.register("a@example.com")
	b := env.register("b@example.com")
	home := orgOf(t, a)
	second := a.must(201, "POST", "/api/organizations", map[string]any{"name": "Second"}).JSON()["id"].(string)
	a.must(404, "POST", "/api/auth/switch-org/"+orgOf(t, b), nil)
	a.must(404, "POST", "/api/auth/switch-org/nope", nil)
	old := a.Token
	r := a.must(200, "POST", "/api/auth/switch-org/"+second, nil)
	a.Token = r.JSON()["access_token"].(string)
	if a.cookie("svc_access_token", "/") != a.Token {
		t.Fatal("switch-org did not set the access cookie")
	}
	if orgOf(t, a) != second {
		t.Fatal("not switched")
	}
	stale := env.newClient()
	stale.Token = old
	stale.must(401, "GET", "/api/auth/me", nil)
	orgs := a.must(200, "GET", "/api/auth/orgs", nil).List()
	if len(orgs) != 2 {
		t.Fatalf("orgs: %v", orgs)
	}
	for _, o := range orgs {
		if o["role"] != "owner" || (o["current"] == true) != (o["id"] == second) {
			t.Fatalf("org entry: %v (home %s)", o, home)
		}
	}
	// Path org routes act in the path's org, whatever the current one.
	a.must(200, "PATCH", "/api/organizations/"+home, map[string]any{"name": "Home renamed"})
	if n := a.must(200, "GET", "/api/organizations/"+home, nil).JSON()["name"]; n != "Home renamed" {
		t.Fatalf("rename: %v", n)
	}
	r = a.must(200, "PATCH", "/api/organizations/"+home+"/branding", map[string]any{"primary_color": "#112233"})
	if r.JSON()["branding"].(map[string]any)["primary_color"] != "#112233" {
		t.Fatalf("branding: %s", r.Body)
	}
	wantValidation(t, a.do("PATCH", "/api/organizations/"+home+"/branding", map[string]any{"primary_color": "red"}), "body", "primary_color")
}
