package server_test

import (
	"testing"
	"time"
)

// Creating an API key and deleting a second factor need a proof of the
// password or a second factor from the last ten minutes: signing in counts,
// as do POST /api/auth/reauthenticate and a step-up challenge.
func TestSensitiveChangesNeedRecentReauthentication(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.UseClock()
	c := env.register("owner@example.com")
	secret, _ := enrolTOTP(t, env, c)
	key := map[string]any{"name": "ci", "scopes": []string{"*"}}
	c.must(201, "POST", "/api/api-keys", key) // just signed in

	env.Advance(11 * time.Minute)
	c.refresh() // a refreshed token is not a fresh proof
	for _, r := range []*resp{
		c.do("POST", "/api/api-keys", key),
		c.do("DELETE", "/api/auth/mfa/"+c.must(200, "GET", "/api/auth/mfa/methods", nil).List()[0]["id"].(string), nil),
	} {
		if r.Status != 403 || r.JSON()["code"] != "reauthentication_required" {
			t.Fatalf("stale session: got %d %s, want 403 reauthentication_required", r.Status, r.Body)
		}
	}
	wantValidation(t, c.do("POST", "/api/auth/reauthenticate", map[string]any{"password": "wrong horse"}), "body", "password")
	c.must(403, "POST", "/api/api-keys", key)
	c.must(200, "POST", "/api/auth/reauthenticate", map[string]any{"password": "correct horse battery"})
	c.must(201, "POST", "/api/api-keys", key)

	// A step-up second factor is a proof too.
	env.Advance(11 * time.Minute)
	c.refresh()
	c.must(403, "POST", "/api/api-keys", key)
	c.must(200, "POST", "/api/auth/mfa/challenge", map[string]any{"method": "totp", "code": totpCode(t, secret, env.clock())})
	methods := c.must(200, "GET", "/api/auth/mfa/methods", nil).List()
	c.must(204, "DELETE", "/api/auth/mfa/"+methods[0]["id"].(string), nil)

	// API keys cannot re-authenticate (the route is for people).
	k, _ := env.apiKey(t, c, key)
	k.must(403, "POST", "/api/auth/reauthenticate", map[string]any{"password": "correct horse battery"})
}
