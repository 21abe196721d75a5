package server_test

import (
	"strings"
	"testing"
	"time"
)

// Keys: shown once, hashed, listed without the secret, human-only management,
// expiry, revocation, the logout-all veto and the new-address audit event.
func TestAPIKeyLifecycle(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	env.UseClock()
	owner := env.register("owner@example.com")
	org := orgOf(t, owner)
	member := env.invite(t, owner, org, "m@example.com", "member")

	wantValidation(t, owner.do("POST", "/api/api-keys", map[string]any{"name": "x", "scopes": []string{"root"}}), "body", "scopes", 0)
	wantValidation(t, owner.do("POST", "/api/api-keys", map[string]any{"name": "x", "scopes": []string{"*"}, "projects": []string{"nope"}}), "body", "projects", 0)
	wantValidation(t, owner.do("POST", "/api/api-keys", map[string]any{"name": "x", "scopes": []string{"*"}, "expires_at": time.Now().Add(-time.Hour).Format(time.RFC3339)}), "body", "expires_at")
	owner.must(404, "POST", "/api/api-keys", map[string]any{"name": "x", "scopes": []string{"*"}, "projects": []string{"01900000-0000-7000-8000-000000000000"}})

	kc, created := env.apiKey(t, owner, map[string]any{"name": "ci", "scopes": []string{"*"}, "expires_at": env.now.Add(48 * time.Hour).Format(time.RFC3339)})
	full := created["key"].(string)
	if !strings.HasPrefix(full, "opsk_") || !strings.HasPrefix(full, created["prefix"].(string)+"_") {
		t.Fatalf("key %q prefix %v", full, created["prefix"])
	}
	// The stored row holds a hash only.
	var n int
	if err := env.DB.Reader().QueryRow(`SELECT COUNT(*) FROM api_keys WHERE instr(secret_hash, ?) > 0 OR scopes LIKE ?`, full, "%"+full[18:]+"%").Scan(&n); err != nil || n != 0 {
		t.Fatalf("secret stored in clear: %d %v", n, err)
	}
	me := kc.must(200, "GET", "/api/auth/me", nil).JSON()
	if me["email"] != "owner@example.com" {
		t.Fatalf("key acts as %v", me["email"])
	}
	// Keys cannot manage keys, log out everywhere or switch orgs.
	kc.must(403, "GET", "/api/api-keys", nil)
	kc.must(403, "POST", "/api/auth/logout-all", nil)
	kc.must(403, "POST", "/api/auth/switch-org/"+org, nil)
	// A tampered secret with a real prefix is refused.
	bad := env.newClient()
	bad.Token = full[:len(full)-2] + "xx"
	bad.must(401, "GET", "/api/auth/me", nil)

	// Listing: no secret; members see their own keys, admins all.
	mk, _ := env.apiKey(t, member, map[string]any{"name": "mine", "scopes": []string{"projects:read"}})
	list := owner.must(200, "GET", "/api/api-keys", nil).List()
	if len(list) != 2 {
		t.Fatalf("owner list: %v", list)
	}
	for _, k := range list {
		if k["key"] != nil || k["creator_email"] == "" || k["created_at"] == nil {
			t.Fatalf("list entry: %v", k)
		}
	}
	if l := member.must(200, "GET", "/api/api-keys", nil).List(); len(l) != 1 || l[0]["name"] != "mine" {
		t.Fatalf("member list: %v", l)
	}
	// Last use and address are recorded; the first use from an address is audited once.
	mk.must(200, "GET", "/api/projects", nil)
	mk.must(200, "GET", "/api/projects", nil)
	mine := member.must(200, "GET", "/api/api-keys", nil).List()[0]
	if mine["last_used_at"] == nil || mine["last_ip"] != "127.0.0.1" {
		t.Fatalf("last use: %v", mine)
	}
	ev := owner.must(200, "GET", "/api/audit-logs?action=api_key.new_ip&actor="+mine["id"].(string), nil).JSON()
	if ev["total"].(float64) != 1 {
		t.Fatalf("new-ip events: %v", ev)
	}
	// A member cannot revoke the owner's key (reads as not found); the owner can revoke any.
	member.must(404, "DELETE", "/api/api-keys/"+created["id"].(string), nil)
	owner.must(204, "DELETE", "/api/api-keys/"+mine["id"].(string), nil)
	if r := mk.must(401, "GET", "/api/projects", nil); r.JSON()["code"] != "api_key_revoked" {
		t.Fatalf("revoked: %s", r.Body)
	}

	// Expiry.
	env.Advance(49 * time.Hour)
	if r := kc.must(401, "GET", "/api/auth/me", nil); r.JSON()["code"] != "api_key_expired" {
		t.Fatalf("expired: %s", r.Body)
	}
	owner.refresh()
	owner.must(200, "POST", "/api/auth/reauthenticate", map[string]any{"password": "correct horse battery"}) // two days on: prove it again

	// logout-all vetoes the keys made before it, not those made after.
	before, _ := env.apiKey(t, owner, map[string]any{"name": "before", "scopes": []string{"*"}})
	before.must(200, "GET", "/api/auth/me", nil)
	env.Advance(2 * time.Second)
	owner.must(204, "POST", "/api/auth/logout-all", nil)
	before.must(401, "GET", "/api/auth/me", nil)
	env.Advance(2 * time.Second)
	again := env.newClient()
	r := again.must(200, "POST", "/api/auth/login", map[string]any{"email": "owner@example.com", "password": "correct horse battery"})
	again.Token = r.JSON()["access_token"].(string)
	env.Advance(2 * time.Second)
	after, _ := env.apiKey(t, again, map[string]any{"name": "after", "scopes": []string{"*"}})
	after.must(200, "GET", "/api/auth/me", nil)
}
