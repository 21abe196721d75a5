package server_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

func TestTOTPEnrolThenSignIn(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	env.UseClock()
	c := env.register("ann@example.com")
	r := c.must(200, "POST", "/api/auth/mfa/totp/setup", nil)
	setup := r.JSON()
	if !strings.HasPrefix(setup["qr_code"].(string), "data:image/png;base64,") || !strings.HasPrefix(setup["otpauth_url"].(string), "otpauth://totp/") {
		t.Fatalf("setup lacks QR or otpauth URL: %s", r.Body)
	}
	// Stateless: nothing is stored until verify succeeds.
	if got := c.must(200, "GET", "/api/auth/mfa/methods", nil).List(); len(got) != 0 {
		t.Fatalf("methods after setup only = %v, want none", got)
	}
	secret := setup["secret"].(string)
	bad := c.do("POST", "/api/auth/mfa/totp/verify", map[string]any{"setup_token": setup["setup_token"], "code": "000000"})
	if bad.Status != 401 {
		t.Fatalf("wrong enrolment code: %d %s, want 401", bad.Status, bad.Body)
	}
	enrolCode := totpCode(t, secret, env.clock())
	var enrol struct {
		BackupCodes []string `json:"backup_codes"`
	}
	c.must(200, "POST", "/api/auth/mfa/totp/verify", map[string]any{"setup_token": setup["setup_token"], "code": enrolCode}).decode(t, &enrol)
	if len(enrol.BackupCodes) != 10 {
		t.Fatalf("first method brought %d backup codes, want 10", len(enrol.BackupCodes))
	}
	if me := c.must(200, "GET", "/api/auth/me", nil).JSON(); me["mfa_enabled"] != true {
		t.Fatalf("me.mfa_enabled = %v after enrolment", me["mfa_enabled"])
	}

	mfaToken, methods := startLogin(t, env, "ann@example.com")
	if len(methods) != 2 || methods[0] != "totp" || methods[1] != "backup_code" {
		t.Fatalf("mfa_methods = %v", methods)
	}
	// The mfa_token is not an access token.
	probe := env.newClient()
	probe.Token = mfaToken
	probe.must(401, "GET", "/api/auth/me", nil)
	// The enrolment code's step is already spent.
	if r := challenge(env, mfaToken, map[string]any{"method": "totp", "code": enrolCode}); r.Status != 401 {
		t.Fatalf("enrolment code replayed at login: %d %s", r.Status, r.Body)
	}
	env.Advance(30 * time.Second)
	code := totpCode(t, secret, env.clock())
	r = challenge(env, mfaToken, map[string]any{"method": "totp", "code": code})
	if r.Status != 200 || r.JSON()["access_token"] == nil {
		t.Fatalf("challenge: %d %s", r.Status, r.Body)
	}
	user := env.newClient()
	user.Token = r.JSON()["access_token"].(string)
	user.must(200, "GET", "/api/auth/me", nil)
	// An mfa_token completes one login only.
	env.Advance(30 * time.Second)
	if r := challenge(env, mfaToken, map[string]any{"method": "totp", "code": totpCode(t, secret, env.clock())}); r.Status != 401 {
		t.Fatalf("spent mfa_token reused: %d %s", r.Status, r.Body)
	}
	// An access token is not an mfa_token.
	if r := challenge(env, user.Token, map[string]any{"method": "totp", "code": totpCode(t, secret, env.clock())}); r.Status != 401 {
		t.Fatalf("access token accepted as mfa_token: %d %s", r.Status, r.Body)
	}
}

func TestTOTPReplayOlderStepAndSkew(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	env.UseClock()
	c := env.register("bo@example.com")
	secret, _ := enrolTOTP(t, env, c)
	env.Advance(90 * time.Second)
	now := env.clock()

	tok, _ := startLogin(t, env, "bo@example.com")
	// Two steps ahead and two behind: beyond the one-step skew.
	for _, at := range []time.Time{now.Add(60 * time.Second), now.Add(-60 * time.Second)} {
		if r := challenge(env, tok, map[string]any{"method": "totp", "code": totpCode(t, secret, at)}); r.Status != 401 {
			t.Fatalf("code for %v accepted at %v: %d", at, now, r.Status)
		}
	}
	// The next step (skew +1) is accepted...
	same := totpCode(t, secret, now.Add(30*time.Second))
	if r := challenge(env, tok, map[string]any{"method": "totp", "code": same}); r.Status != 200 {
		t.Fatalf("code of the next step refused: %d %s", r.Status, r.Body)
	}
	tok, _ = startLogin(t, env, "bo@example.com")
	if r := challenge(env, tok, map[string]any{"method": "totp", "code": same}); r.Status != 401 {
		t.Fatalf("same code accepted twice: %d %s", r.Status, r.Body)
	}
	// ...and afterwards the current step, older than the accepted one, is not.
	if r := challenge(env, tok, map[string]any{"method": "totp", "code": totpCode(t, secret, now)}); r.Status != 401 {
		t.Fatalf("older step accepted after a newer one: %d %s", r.Status, r.Body)
	}
	env.Advance(60 * time.Second)
	if r := challenge(env, tok, map[string]any{"method": "totp", "code": totpCode(t, secret, env.clock())}); r.Status != 200 {
		t.Fatalf("fresh step refused: %d %s", r.Status, r.Body)
	}
}

func TestTOTPSetupTokenTamperedForeignOrExpired(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	env.UseClock()
	a := env.register("cy@example.com")
	b := env.register("di@example.com")
	setup := a.must(200, "POST", "/api/auth/mfa/totp/setup", nil).JSON()
	tokStr, secret := setup["setup_token"].(string), setup["secret"].(string)
	raw, _ := base64.RawURLEncoding.DecodeString(tokStr)
	raw[len(raw)/2] ^= 1
	tampered := base64.RawURLEncoding.EncodeToString(raw)
	code := totpCode(t, secret, env.clock())
	for name, tc := range map[string]struct {
		c   *client
		tok string
	}{"tampered": {a, tampered}, "garbage": {a, "not-base64!"}, "other user": {b, tokStr}} {
		r := tc.c.do("POST", "/api/auth/mfa/totp/verify", map[string]any{"setup_token": tc.tok, "code": code})
		if r.Status != 400 || r.JSON()["code"] != "invalid_setup_token" {
			t.Fatalf("%s setup token: %d %s, want 400 invalid_setup_token", name, r.Status, r.Body)
		}
	}
	env.Advance(11 * time.Minute)
	r := a.do("POST", "/api/auth/mfa/totp/verify", map[string]any{"setup_token": tokStr, "code": totpCode(t, secret, env.clock())})
	if r.Status != 400 {
		t.Fatalf("expired setup token: %d %s", r.Status, r.Body)
	}
	if n := len(a.must(200, "GET", "/api/auth/mfa/methods", nil).List()); n != 0 {
		t.Fatalf("%d methods stored after refused verifies", n)
	}
}

func TestWrongFactorsAreRateLimited(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	env.UseClock()
	c := env.register("ed@example.com")
	enrolTOTP(t, env, c)
	tok, _ := startLogin(t, env, "ed@example.com")
	for i := 0; i < 10; i++ {
		if r := challenge(env, tok, map[string]any{"method": "totp", "code": "123456"}); r.Status != 401 {
			t.Fatalf("wrong code %d: %d %s", i, r.Status, r.Body)
		}
	}
	r := challenge(env, tok, map[string]any{"method": "backup_code", "code": "BBBBB-BBBBB"})
	if r.Status != 429 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("11th wrong factor: %d (Retry-After %q), want 429", r.Status, r.Header.Get("Retry-After"))
	}
}

func TestDeleteLastMethodDisablesMFA(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	env.UseClock()
	c := env.register("fay@example.com")
	other := env.register("gus@example.com")
	enrolTOTP(t, env, c)
	methods := c.must(200, "GET", "/api/auth/mfa/methods", nil).List()
	if len(methods) != 2 {
		t.Fatalf("methods = %v, want totp and backup_code", methods)
	}
	var totpID string
	for _, m := range methods {
		if m["kind"] == "totp" {
			totpID = m["id"].(string)
		} else if m["remaining_codes"] != float64(10) {
			t.Fatalf("backup set = %v", m)
		}
	}
	other.must(404, "DELETE", "/api/auth/mfa/"+totpID, nil)
	c.must(404, "DELETE", "/api/auth/mfa/not-a-uuid", nil)
	c.must(204, "DELETE", "/api/auth/mfa/"+totpID, nil)
	if n := len(c.must(200, "GET", "/api/auth/mfa/methods", nil).List()); n != 0 {
		t.Fatalf("%d methods left after removing the only factor", n)
	}
	r := env.newClient().must(200, "POST", "/api/auth/login", map[string]any{"email": "fay@example.com", "password": "correct horse battery"})
	if r.JSON()["access_token"] == nil {
		t.Fatalf("login still asks for a factor: %s", r.Body)
	}
}

// TestTOTPSurvivesRestart: the sealed secret opens with the key kept in the
// data directory, so a restart keeps every enrolled app working.
func TestTOTPSurvivesRestart(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	c := env.register("hugo@example.com")
	secret, _ := enrolTOTP(t, env, c)
	env = env.Restart(openSignup)
	tok, _ := startLogin(t, env, "hugo@example.com")
	// Real clock here: the enrolment step may still be current, so use the next one.
	code := totpCode(t, secret, time.Now().Add(30*time.Second))
	if r := challenge(env, tok, map[string]any{"method": "totp", "code": code}); r.Status != 200 {
		t.Fatalf("totp after restart: %d %s", r.Status, r.Body)
	}
}
