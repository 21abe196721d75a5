package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The refresh state table of spec section 3, row by row.
func TestRefreshRotationGraceAndReuse(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

// A token two or more generations old is a replay even inside the grace
// window: the session dies, and so does the access token issued just before.
func TestRefreshOlderGenerationReuseRevokesSession(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.UseClock()
	c := env.register("ada@example.com")
	gen0 := c.cookie("svc_refresh_token", "/api/auth")
	c.must(200, "POST", "/api/auth/refresh", nil)
	env.Advance(time.Second)
	r := c.must(200, "POST", "/api/auth/refresh", nil)
	gen2 := c.cookie("svc_refresh_token", "/api/auth")
	c.Token = r.JSON()["access_token"].(string)
	c.must(200, "GET", "/api/auth/me", nil)

	thief := env.newClient()
	r = thief.do("POST", "/api/auth/refresh", map[string]any{"refresh_token": gen0})
	want401(t, "older generation", r)
	if r.JSON()["code"] != "refresh_reuse" {
		t.Fatalf("reuse: got %s, want code refresh_reuse", r.Body)
	}
	want401(t, "access token issued before the reuse", c.do("GET", "/api/auth/me", nil))
	want401(t, "current refresh token after reuse", c.do("POST", "/api/auth/refresh", map[string]any{"refresh_token": gen2}))
	// The session no longer shows among the user's sessions.
	other := env.login("ada@example.com", pw)
	if n := len(other.must(200, "GET", "/api/auth/sessions", nil).List()); n != 1 {
		t.Fatalf("sessions after reuse: got %d, want only the new one", n)
	}
	// Garbage and unknown sessions are plain 401s.
	want401(t, "garbage refresh", thief.do("POST", "/api/auth/refresh", map[string]any{"refresh_token": "nope"}))
	want401(t, "unknown session", thief.do("POST", "/api/auth/refresh", map[string]any{"refresh_token": "01900000-0000-7000-8000-000000000000.AAAA"}))
	want401(t, "no refresh token", env.newClient().do("POST", "/api/auth/refresh", nil))
	// A refresh token expires with its session (30 days).
	env.Advance(31 * 24 * time.Hour)
	want401(t, "expired session", other.do("POST", "/api/auth/refresh", nil))
}

func TestLogoutWithExpiredTokenStillClearsCookies(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.UseClock()
	c := env.register("ada@example.com")
	refresh := c.cookie("svc_refresh_token", "/api/auth")
	env.Advance(time.Hour) // the access token is long dead
	r := c.must(204, "POST", "/api/auth/logout", nil)
	cleared := 0
	for _, ck := range r.Header.Values("Set-Cookie") {
		if strings.Contains(ck, "Max-Age=0") {
			cleared++
		}
	}
	if cleared != 2 {
		t.Fatalf("logout cleared %d cookies, want 2: %v", cleared, r.Header.Values("Set-Cookie"))
	}
	// The refresh cookie named the session, so the session is revoked.
	want401(t, "refresh after logout", env.newClient().do("POST", "/api/auth/refresh", map[string]any{"refresh_token": refresh}))
	// Logout without any credential is still a 204.
	env.newClient().must(204, "POST", "/api/auth/logout", nil)
}

func TestRestartKeepsUsersAndSessions(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := env.register("lin@example.com")
	env2 := env.Restart()
	c.env = env2
	c.must(200, "GET", "/api/auth/me", nil)
	// Refresh cookie still valid: the key survived.
	c.Token = ""
	c.must(200, "POST", "/api/auth/refresh", nil)
	// A logged-out token stays revoked across the restart (the blocklist is persisted).
	d := env2.login("lin@example.com", pw)
	tok := d.Token
	d.must(204, "POST", "/api/auth/logout", nil)
	env3 := env2.Restart()
	d.env, d.Token = env3, tok
	want401(t, "logged-out token after restart", d.do("GET", "/api/auth/me", nil))
	c.env = env3
	c.must(200, "POST", "/api/auth/refresh", nil)
	env3.login("lin@example.com", pw)

	// Generated keys are private to the server's user.
	for path, want := range map[string]os.FileMode{"keys": 0o700, "keys/jwt.key": 0o600} {
		st, err := os.Stat(filepath.Join(env3.Dir, path))
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != want {
			t.Fatalf("%s: mode %o, want %o", path, got, want)
		}
	}
}
