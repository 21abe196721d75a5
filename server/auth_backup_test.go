package server_test

import (
	"strings"
	"sync"
	"testing"
	"time"
)

func TestBackupCodeWorksOnceEvenInParallel(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	env.UseClock()
	c := env.register("hal@example.com")
	secret, codes := enrolTOTP(t, env, c)
	code := codes[0]

	const n = 8
	tokens := make([]string, n)
	for i := range tokens {
		tokens[i], _ = startLogin(t, env, "hal@example.com")
	}
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := range tokens {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			statuses[i] = challenge(env, tokens[i], map[string]any{"method": "backup_code", "code": code}).Status
		}(i)
	}
	wg.Wait()
	ok := 0
	for _, s := range statuses {
		switch s {
		case 200:
			ok++
		case 401:
		default:
			t.Fatalf("parallel backup code: unexpected status %d", s)
		}
	}
	if ok != 1 {
		t.Fatalf("one backup code signed in %d times (statuses %v), want exactly once", ok, statuses)
	}
	// Spent for good; another code works, typed in lower case without the dash.
	tok, _ := startLogin(t, env, "hal@example.com")
	if r := challenge(env, tok, map[string]any{"method": "backup_code", "code": code}); r.Status != 401 {
		t.Fatalf("spent backup code: %d", r.Status)
	}
	if r := challenge(env, tok, map[string]any{"method": "backup_code", "code": strings.ToLower(strings.ReplaceAll(codes[1], "-", ""))}); r.Status != 200 {
		t.Fatalf("second backup code: %d %s", r.Status, r.Body)
	}
	for _, m := range c.must(200, "GET", "/api/auth/mfa/methods", nil).List() {
		if m["kind"] == "backup_code" && m["remaining_codes"] != float64(8) {
			t.Fatalf("remaining codes = %v, want 8", m["remaining_codes"])
		}
	}

	// Regenerating needs proof of a current factor.
	wantValidation(t, c.do("POST", "/api/auth/mfa/backup-codes/regenerate", map[string]any{}), "body", "method")
	if r := c.do("POST", "/api/auth/mfa/backup-codes/regenerate", map[string]any{"method": "totp", "code": "000000"}); r.Status != 401 {
		t.Fatalf("regenerate with a wrong code: %d %s", r.Status, r.Body)
	}
	env.Advance(30 * time.Second)
	var fresh struct {
		Codes []string `json:"codes"`
	}
	c.must(200, "POST", "/api/auth/mfa/backup-codes/regenerate", map[string]any{"method": "totp", "code": totpCode(t, secret, env.clock())}).decode(t, &fresh)
	if len(fresh.Codes) != 10 {
		t.Fatalf("regenerated %d codes", len(fresh.Codes))
	}
	tok, _ = startLogin(t, env, "hal@example.com")
	if r := challenge(env, tok, map[string]any{"method": "backup_code", "code": codes[2]}); r.Status != 401 {
		t.Fatalf("old set still works after regenerate: %d", r.Status)
	}
	if r := challenge(env, tok, map[string]any{"method": "backup_code", "code": fresh.Codes[0]}); r.Status != 200 {
		t.Fatalf("new backup code: %d %s", r.Status, r.Body)
	}
}

func TestStepUpInSession(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	env.UseClock()
	c := env.register("ivy@example.com")
	secret, _ := enrolTOTP(t, env, c)
	env.Advance(30 * time.Second)
	r := c.must(200, "POST", "/api/auth/mfa/challenge", map[string]any{"method": "totp", "code": totpCode(t, secret, env.clock())})
	if r.JSON()["access_token"] == nil {
		t.Fatalf("step-up answered no access token: %s", r.Body)
	}
	// Without any credential the in-session form is refused.
	if r := env.newClient().do("POST", "/api/auth/mfa/challenge", map[string]any{"method": "totp", "code": "123456"}); r.Status != 401 {
		t.Fatalf("challenge without token or session: %d", r.Status)
	}
}
