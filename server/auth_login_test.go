package server_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server"
)

const pw = "correct horse battery"

func TestLoginSuccessAndSameFailureForWrongPasswordOrUnknownAddress(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.register("ada@example.com")
	c := env.newClient()
	r := c.must(200, "POST", "/api/auth/login", map[string]any{"email": "ADA@example.com", "password": pw})
	if r.JSON()["access_token"] == "" || c.cookie("svc_refresh_token", "/api/auth") == "" {
		t.Fatalf("login: got %s and no refresh cookie", r.Body)
	}
	wrong := env.newClient().do("POST", "/api/auth/login", map[string]any{"email": "ada@example.com", "password": "wrong password"})
	unknown := env.newClient().do("POST", "/api/auth/login", map[string]any{"email": "nobody@example.com", "password": "wrong password"})
	if wrong.Status != 401 || unknown.Status != 401 {
		t.Fatalf("got %d and %d, want 401 for both", wrong.Status, unknown.Status)
	}
	if !bytes.Equal(wrong.Body, unknown.Body) {
		t.Fatalf("bodies differ, which tells addresses apart: %s vs %s", wrong.Body, unknown.Body)
	}
	if wrong.Header.Get("WWW-Authenticate") != "Bearer" || unknown.Header.Get("WWW-Authenticate") != "Bearer" {
		t.Fatal("401 without WWW-Authenticate: Bearer")
	}
	wantValidation(t, env.newClient().do("POST", "/api/auth/login", `{"email":`), "body")
	wantValidation(t, env.newClient().do("POST", "/api/auth/login", map[string]any{"email": "ada@example.com"}), "body", "password")
	wantValidation(t, env.newClient().do("POST", "/api/auth/login", map[string]any{"email": true, "password": pw}), "body", "email")
}

// countAudits counts audit lines of an action in the server log.
func countAudits(env *testEnv, action string) int {
	return strings.Count(env.Logs.String(), "action="+action+" ")
}

func retryAfter(t *testing.T, r *resp) int {
	t.Helper()
	if r.Status != 429 {
		t.Fatalf("got %d %s, want 429", r.Status, r.Body)
	}
	n, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || n < 1 {
		t.Fatalf("429 with Retry-After %q, want whole seconds >= 1", r.Header.Get("Retry-After"))
	}
	return n
}

func TestLoginPerAddressLimitComesBeforeHashingAndSuccessResetsIt(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.UseClock()
	env.register("ada@example.com")
	bad := map[string]any{"email": "ada@example.com", "password": "guess"}
	c := env.newClient()
	for i := 0; i < 10; i++ {
		c.must(401, "POST", "/api/auth/login", bad)
	}
	// The 11th attempt is refused, even with the right password, before the
	// password is checked: no further failure is recorded.
	before := countAudits(env, "auth.login_failed")
	retryAfter(t, c.do("POST", "/api/auth/login", bad))
	retryAfter(t, c.do("POST", "/api/auth/login", map[string]any{"email": "ada@example.com", "password": pw}))
	if after := countAudits(env, "auth.login_failed"); after != before {
		t.Fatalf("rate-limited attempts reached the password check (%d -> %d failures)", before, after)
	}
	// Another address is not affected.
	if r := c.do("POST", "/api/auth/login", map[string]any{"email": "other@example.com", "password": "x"}); r.Status != 401 {
		t.Fatalf("other address: got %d, want 401", r.Status)
	}
	// The sliding window passes (two windows clear the weighted previous one);
	// the owner signs in, which clears the address's failures...
	env.Advance(10*time.Minute + time.Second)
	for i := 0; i < 9; i++ {
		c.must(401, "POST", "/api/auth/login", bad)
	}
	env.login("ada@example.com", pw)
	// ...so strangers start from zero again rather than keeping the account locked.
	for i := 0; i < 9; i++ {
		c.must(401, "POST", "/api/auth/login", bad)
	}
	env.login("ada@example.com", pw)
}

func TestLoginPerIPLimit(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.UseClock()
	c := env.newClient()
	// Spraying many addresses from one client address hits the per-IP limit.
	for i := 0; i < 30; i++ {
		c.must(401, "POST", "/api/auth/login", map[string]any{"email": "u" + strconv.Itoa(i) + "@example.com", "password": "x"})
	}
	before := countAudits(env, "auth.login_failed")
	secs := retryAfter(t, c.do("POST", "/api/auth/login", map[string]any{"email": "fresh@example.com", "password": "x"}))
	if secs > 60 {
		t.Fatalf("Retry-After %d exceeds the one-minute window", secs)
	}
	if countAudits(env, "auth.login_failed") != before {
		t.Fatal("an IP-limited attempt reached the password check")
	}
	env.Advance(2 * time.Minute)
	c.must(401, "POST", "/api/auth/login", map[string]any{"email": "fresh@example.com", "password": "x"})
}

// Behind a trusted proxy the client address is the hop the proxy appended;
// addresses the client wrote itself cannot dodge the per-IP limit.
func TestTrustedProxyUsesTheHopItAppended(t *testing.T) {
	t.Parallel()
	env := newEnv(t, func(c *server.Config) { c.TrustProxy = true })
	env.UseClock()
	c := env.newClient()
	for i := 0; i < 30; i++ {
		c.Header.Set("X-Forwarded-For", "10.9.9."+strconv.Itoa(i)+", 203.0.113.7")
		c.must(401, "POST", "/api/auth/login", map[string]any{"email": "u" + strconv.Itoa(i) + "@example.com", "password": "x"})
	}
	c.Header.Set("X-Forwarded-For", "10.9.9.99, 203.0.113.7")
	retryAfter(t, c.do("POST", "/api/auth/login", map[string]any{"email": "v@example.com", "password": "x"}))
	// Another real client behind the same proxy is not affected.
	c.Header.Set("X-Forwarded-For", "203.0.113.8")
	c.must(401, "POST", "/api/auth/login", map[string]any{"email": "v@example.com", "password": "x"})
	// Sessions record the same address.
	a := env.newClient()
	a.Header.Set("X-Forwarded-For", "198.51.100.1, 203.0.113.9")
	r := a.must(201, "POST", "/api/auth/register", map[string]any{"email": "ada@example.com", "password": pw})
	a.Token = r.JSON()["access_token"].(string)
	if ip := a.must(200, "GET", "/api/auth/sessions", nil).List()[0]["ip"]; ip != "203.0.113.9" {
		t.Fatalf("session address: got %v, want 203.0.113.9", ip)
	}
}
