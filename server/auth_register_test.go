package server_test

import (
	"testing"

	"github.com/opsagent/opsagent/server"
)

func TestAuthConfigFollowsSignupPolicy(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := env.newClient()
	cfg := c.must(200, "GET", "/api/auth/config", nil).JSON()
	if cfg["signup"] != "open" || cfg["signup_enabled"] != true || cfg["password_reset_enabled"] != true || cfg["email_delivery"] != "outbox" {
		t.Fatalf("fresh server config: got %v", cfg)
	}
	env.register("first@example.com")
	cfg = c.must(200, "GET", "/api/auth/config", nil).JSON()
	if cfg["signup"] != "invite" || cfg["signup_enabled"] != false {
		t.Fatalf("after the first account the default policy is invite: got %v", cfg)
	}
	if cfg["access_token_ttl_seconds"] != 900.0 || cfg["refresh_grace_seconds"] != 30.0 {
		t.Fatalf("token lifetimes: got %v", cfg)
	}

	closed := newEnv(t, func(c *server.Config) { c.Signup = "closed"; c.DisablePasswordReset = true })
	cfg = closed.newClient().must(200, "GET", "/api/auth/config", nil).JSON()
	if cfg["signup"] != "closed" || cfg["signup_enabled"] != false || cfg["password_reset_enabled"] != false {
		t.Fatalf("closed server config: got %v", cfg)
	}
}

func TestRegisterCreatesAccountOrgAndSession(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := env.newClient()
	r := c.must(201, "POST", "/api/auth/register", map[string]any{"email": "Ada@Example.com", "password": "correct horse battery", "name": "Ada"})
	body := r.JSON()
	if body["token_type"] != "bearer" || body["expires_in"] != 900.0 || body["access_token"] == "" {
		t.Fatalf("token response: got %s", r.Body)
	}
	if c.cookie("svc_access_token", "/") == "" || c.cookie("svc_refresh_token", "/api/auth") == "" {
		t.Fatal("register did not set both cookies")
	}
	for _, ck := range r.Header.Values("Set-Cookie") {
		if !containsAll(ck, "HttpOnly", "SameSite=Lax") {
			t.Fatalf("cookie lacks HttpOnly or SameSite=Lax: %s", ck)
		}
	}
	c.Token = body["access_token"].(string)
	me := c.must(200, "GET", "/api/auth/me", nil).JSON()
	if me["email"] != "ada@example.com" || me["role"] != "owner" || me["current_org_id"] == "" || me["email_verified"] != false {
		t.Fatalf("me after register: got %v", me)
	}
	// The personal organization exists with the user as its owner.
	var role string
	err := env.DB.Reader().QueryRow(`SELECT m.role FROM org_members m JOIN organizations o ON o.id = m.org_id
		WHERE m.user_id = ? AND o.personal = 1`, me["id"]).Scan(&role)
	if err != nil || role != "owner" {
		t.Fatalf("personal org membership: role %q, err %v", role, err)
	}
	// A verification mail was written to the outbox.
	env.lastMailToken("ada@example.com", "Verify")
}

func TestRegisterRefusals(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.register("first@example.com")
	// Default policy: open until the first account, then invitations only.
	r := env.newClient().do("POST", "/api/auth/register", map[string]any{"email": "second@example.com", "password": "correct horse battery"})
	if r.Status != 403 || r.JSON()["code"] != "signup_disabled" {
		t.Fatalf("second register on default policy: got %d %s, want 403 signup_disabled", r.Status, r.Body)
	}
	closed := newEnv(t, func(c *server.Config) { c.Signup = "closed" })
	if r := closed.newClient().do("POST", "/api/auth/register", map[string]any{"email": "a@example.com", "password": "correct horse battery"}); r.Status != 403 {
		t.Fatalf("register when closed: got %d, want 403", r.Status)
	}
	invite := newEnv(t, func(c *server.Config) { c.Signup = "invite" })
	if r := invite.newClient().do("POST", "/api/auth/register", map[string]any{"email": "a@example.com", "password": "correct horse battery"}); r.Status != 403 {
		t.Fatalf("register when invite-only: got %d, want 403", r.Status)
	}

	open := newEnv(t, openSignup)
	open.register("dup@example.com")
	r = open.newClient().do("POST", "/api/auth/register", map[string]any{"email": "DUP@example.com", "password": "another password"})
	if r.Status != 409 {
		t.Fatalf("duplicate address (other case): got %d %s, want 409", r.Status, r.Body)
	}
}

func TestRegisterValidationShapes(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := env.newClient()
	cases := []struct {
		name string
		body any
		loc  []any
	}{
		{"malformed JSON", `{"email": "a@example.com",`, []any{"body"}},
		{"not an object", `["a"]`, []any{"body"}},
		{"empty body", ``, []any{"body"}},
		{"missing email", map[string]any{"password": "correct horse battery"}, []any{"body", "email"}},
		{"missing password", map[string]any{"email": "a@example.com"}, []any{"body", "password"}},
		{"email wrong type", map[string]any{"email": 42, "password": "correct horse battery"}, []any{"body", "email"}},
		{"password wrong type", map[string]any{"email": "a@example.com", "password": []string{"x"}}, []any{"body", "password"}},
		{"bad email", map[string]any{"email": "not-an-address", "password": "correct horse battery"}, []any{"body", "email"}},
		{"email with display name", map[string]any{"email": "Ada <a@example.com>", "password": "correct horse battery"}, []any{"body", "email"}},
		{"short password", map[string]any{"email": "a@example.com", "password": "short"}, []any{"body", "password"}},
		{"name too long", map[string]any{"email": "a@example.com", "password": "correct horse battery", "name": string(make([]byte, 121))}, []any{"body", "name"}},
		{"null email", map[string]any{"email": nil, "password": "correct horse battery"}, []any{"body", "email"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantValidation(t, c.do("POST", "/api/auth/register", tc.body), tc.loc...)
		})
	}
	// Every wrong field is reported at once.
	r := c.do("POST", "/api/auth/register", map[string]any{"email": 1, "password": 2})
	wantValidation(t, r, "body", "email")
	wantValidation(t, r, "body", "password")
	// Nothing was created by any of those.
	if n, _ := env.DB.CountUsers(t.Context()); n != 0 {
		t.Fatalf("rejected registrations created %d users", n)
	}
	// A body that is not JSON at all is refused by its content type.
	if r := c.send(mustRequest(t, "POST", env.URL+"/api/auth/register", "text/plain", "email=a")); r.Status != 422 {
		t.Fatalf("text/plain body: got %d, want 422", r.Status)
	}
}
