package server_test

import (
	"testing"
	"time"

	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/store"
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
	// The verification and reset tokens are written after the answers (mail
	// never holds a request): wait for both, or one lands after the clock
	// moved and is live.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var n int
		if err := env.DB.Reader().QueryRow(`SELECT COUNT(DISTINCT kind) FROM email_tokens WHERE kind IN (?, ?)`,
			string(store.TokenVerify), string(store.TokenReset)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the verification and reset tokens were not both written")
		}
	}
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
