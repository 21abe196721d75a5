package server_test

import (
	"testing"
	"time"

	"github.com/opsagent/opsagent/server"
)

// The cleanup job removes expired second-factor challenges, device grants
// and mailed tokens, and keeps live ones.
func TestCleanupJobRemovesExpiredChallengesGrantsAndTokens(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup, func(c *server.Config) { c.BaseURL = "https://ops.example.test" })
	env.UseClock()
	c := env.register("owner@example.com")
	count := func(table string) int {
		t.Helper()
		var n int
		if err := env.DB.Reader().QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	c.must(200, "POST", "/api/auth/mfa/webauthn/register/options", nil)
	env.newClient().must(200, "POST", "/api/auth/device-code", map[string]any{"client_id": "cli"})
	env.newClient().must(200, "POST", "/api/auth/forgot-password", map[string]any{"email": "owner@example.com"})
	tables := []string{"webauthn_challenges", "device_grants", "email_tokens"}
	before := map[string]int{}
	for _, tb := range tables {
		if before[tb] = count(tb); before[tb] == 0 {
			t.Fatalf("no %s row to clean up", tb)
		}
	}
	if err := env.Srv.RunPurgeExpired(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		if n := count(tb); n < before[tb] {
			t.Fatalf("%s: live rows removed (%d left of %d)", tb, n, before[tb])
		}
	}
	env.Advance(8 * 24 * time.Hour) // past every expiry and its grace day
	if err := env.Srv.RunPurgeExpired(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		if n := count(tb); n != 0 {
			t.Errorf("%s: %d expired rows left after the cleanup job, want 0", tb, n)
		}
	}
}
