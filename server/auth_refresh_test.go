package server_test

import (
	"net/http"
	"testing"
	"time"
)

// The refresh state table of spec section 3, row by row.
func TestRefreshRotationGraceAndReuse(t *testing.T) {
	env := newEnv(t)
	env.UseClock()
	c := env.register("ada@example.com")
	first := c.cookie("svc_refresh_token", "/api/auth")
	if first == "" {
		t.Fatal("no refresh cookie after register")
	}

	// Rotation: the current token gives a new one.
	r := c.must(200, "POST", "/api/auth/refresh", nil)
	second := c.cookie("svc_refresh_token", "/api/auth")
	if second == first || second == "" {
		t.Fatalf("refresh token did not rotate: %q", second)
	}
	access := r.JSON()["access_token"].(string)

	// Grace: the previous token within 30 s is served the same new token (another tab).
	tab := env.newClient()
	env.Advance(10 * time.Second)
	r = tab.must(200, "POST", "/api/auth/refresh", map[string]any{"refresh_token": first})
	if got := tab.cookie("svc_refresh_token", "/api/auth"); got != second {
		t.Fatalf("grace refresh: got token %q, want the same new token %q", got, second)
	}

	// After the grace window, the previous token is reuse: the whole session is revoked.
	env.Advance(31 * time.Second)
	r = tab.do("POST", "/api/auth/refresh", map[string]any{"refresh_token": first})
	if r.Status != 401 || r.Header.Get("WWW-Authenticate") != "Bearer" {
		t.Fatalf("reuse after grace: got %d %v, want 401 with WWW-Authenticate", r.Status, r.Header)
	}
	// Every later call on that session is 401: the current refresh token and the access token.
	c.Token = access
	if r := c.do("GET", "/api/auth/me", nil); r.Status != 401 {
		t.Fatalf("access token of revoked session: got %d, want 401", r.Status)
	}
	if r := c.do("POST", "/api/auth/refresh", map[string]any{"refresh_token": second}); r.Status != 401 {
		t.Fatalf("current refresh of revoked session: got %d, want 401", r.Status)
	}
}

func TestLogoutBlocklistsAndLogoutAllStampsEpoch(t *testing.T) {
	env := newEnv(t)
	a := env.register("grace@example.com")
	a.must(200, "GET", "/api/auth/me", nil)
	tok := a.Token
	a.must(204, "POST", "/api/auth/logout", nil)
	a.Token = tok
	if r := a.do("GET", "/api/auth/me", nil); r.Status != 401 {
		t.Fatalf("after logout: got %d, want 401", r.Status)
	}

	// Two sessions; logout-all kills both.
	b1 := env.newClient()
	r := b1.must(200, "POST", "/api/auth/login", map[string]any{"email": "grace@example.com", "password": "correct horse battery"})
	b1.Token = r.JSON()["access_token"].(string)
	b2 := env.newClient()
	r = b2.must(200, "POST", "/api/auth/login", map[string]any{"email": "grace@example.com", "password": "correct horse battery"})
	b2.Token = r.JSON()["access_token"].(string)
	b1.must(204, "POST", "/api/auth/logout-all", nil)
	if r := b2.do("GET", "/api/auth/me", nil); r.Status != 401 {
		t.Fatalf("other session after logout-all: got %d, want 401", r.Status)
	}
	if r := b2.do("POST", "/api/auth/refresh", nil); r.Status != 401 {
		t.Fatalf("refresh after logout-all: got %d, want 401", r.Status)
	}
	// A new login works again.
	b3 := env.newClient()
	r = b3.must(200, "POST", "/api/auth/login", map[string]any{"email": "grace@example.com", "password": "correct horse battery"})
	b3.Token = r.JSON()["access_token"].(string)
	b3.must(200, "GET", "/api/auth/me", nil)
}

func TestRestartKeepsUsersAndSessions(t *testing.T) {
	env := newEnv(t)
	c := env.register("lin@example.com")
	env2 := env.Restart()
	c.env = env2
	c.must(200, "GET", "/api/auth/me", nil)
	// Refresh cookie still valid: the key survived.
	c.Token = ""
	req, _ := http.NewRequest("GET", env2.URL+"/api/auth/me", nil)
	_ = req
	c.must(200, "POST", "/api/auth/refresh", nil)
}
