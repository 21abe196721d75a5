package server_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server"
)

func TestForgotAndResendAnswerTheSameForAnyAddress(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.register("ada@example.com")
	c := env.newClient()
	known := c.must(200, "POST", "/api/auth/forgot-password", map[string]any{"email": "ada@example.com"})
	unknown := c.must(200, "POST", "/api/auth/forgot-password", map[string]any{"email": "nobody@example.com"})
	if !bytes.Equal(known.Body, unknown.Body) {
		t.Fatalf("forgot-password bodies differ: %s vs %s", known.Body, unknown.Body)
	}
	if len(env.mailTokens("ada@example.com", "Reset")) != 1 || len(env.mailTokens("nobody@example.com", "")) != 0 {
		t.Fatal("want exactly one reset mail, to the known address")
	}
	known = c.must(200, "POST", "/api/auth/resend-verify", map[string]any{"email": "ada@example.com"})
	unknown = c.must(200, "POST", "/api/auth/resend-verify", map[string]any{"email": "nobody@example.com"})
	if !bytes.Equal(known.Body, unknown.Body) {
		t.Fatalf("resend-verify bodies differ: %s vs %s", known.Body, unknown.Body)
	}
	if n := len(env.mailTokens("ada@example.com", "Verify")); n != 2 {
		t.Fatalf("verify mails: got %d, want 2 (register + resend)", n)
	}
	wantValidation(t, c.do("POST", "/api/auth/forgot-password", map[string]any{}), "body", "email")

	// Mail per address is capped, yet the answer does not change.
	for i := 0; i < 6; i++ {
		c.must(200, "POST", "/api/auth/forgot-password", map[string]any{"email": "ada@example.com"})
	}
	if n := len(env.mailTokens("ada@example.com", "Reset")); n != 5 {
		t.Fatalf("reset mails to one address in an hour: got %d, want 5", n)
	}

	off := newEnv(t, func(c *server.Config) { c.DisablePasswordReset = true })
	off.register("ada@example.com")
	if r := off.newClient().do("POST", "/api/auth/forgot-password", map[string]any{"email": "ada@example.com"}); r.Status != 403 {
		t.Fatalf("forgot-password when disabled: got %d, want 403", r.Status)
	}
}

func TestResetPasswordIsSingleUseExpiresAndEndsSessions(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.UseClock()
	a := env.register("ada@example.com")
	b := env.login("ada@example.com", pw)
	anon := env.newClient()
	anon.must(200, "POST", "/api/auth/forgot-password", map[string]any{"email": "ada@example.com"})
	tok := env.lastMailToken("ada@example.com", "Reset")

	wantValidation(t, anon.do("POST", "/api/auth/reset-password", map[string]any{"token": tok, "new_password": "short"}), "body", "new_password")
	if r := anon.do("POST", "/api/auth/reset-password", map[string]any{"token": "wrong", "new_password": "a new password"}); r.Status != 400 {
		t.Fatalf("unknown token: got %d, want 400", r.Status)
	}
	anon.must(204, "POST", "/api/auth/reset-password", map[string]any{"token": tok, "new_password": "a new password"})
	if r := anon.do("POST", "/api/auth/reset-password", map[string]any{"token": tok, "new_password": "yet another one"}); r.Status != 400 {
		t.Fatalf("second use of the token: got %d, want 400", r.Status)
	}
	// Every session of the account ended.
	want401(t, "session a after reset", a.do("GET", "/api/auth/me", nil))
	want401(t, "session b after reset", b.do("GET", "/api/auth/me", nil))
	want401(t, "refresh after reset", b.do("POST", "/api/auth/refresh", nil))
	want401(t, "old password", env.newClient().do("POST", "/api/auth/login", map[string]any{"email": "ada@example.com", "password": pw}))
	c := env.login("ada@example.com", "a new password")
	// A reset proves the mailbox.
	if v := c.must(200, "GET", "/api/auth/me", nil).JSON()["email_verified"]; v != true {
		t.Fatalf("email_verified after reset: %v", v)
	}

	// A token older than an hour is refused.
	anon.must(200, "POST", "/api/auth/forgot-password", map[string]any{"email": "ada@example.com"})
	old := env.lastMailToken("ada@example.com", "Reset")
	env.Advance(61 * time.Minute)
	if r := anon.do("POST", "/api/auth/reset-password", map[string]any{"token": old, "new_password": "too late now"}); r.Status != 400 {
		t.Fatalf("expired token: got %d, want 400", r.Status)
	}
	// A newer mail voids the older token.
	anon.must(200, "POST", "/api/auth/forgot-password", map[string]any{"email": "ada@example.com"})
	first := env.lastMailToken("ada@example.com", "Reset")
	anon.must(200, "POST", "/api/auth/forgot-password", map[string]any{"email": "ada@example.com"})
	server.WaitBackgroundForTest(env.Srv) // the newer token is written after the answer
	if r := anon.do("POST", "/api/auth/reset-password", map[string]any{"token": first, "new_password": "superseded one"}); r.Status != 400 {
		t.Fatalf("superseded token: got %d, want 400", r.Status)
	}
	anon.must(204, "POST", "/api/auth/reset-password", map[string]any{"token": env.lastMailToken("ada@example.com", "Reset"), "new_password": "the newest one"})
	env.login("ada@example.com", "the newest one")
}

func TestVerifyEmail(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.UseClock()
	a := env.register("ada@example.com")
	tok := env.lastMailToken("ada@example.com", "Verify")
	anon := env.newClient()
	if r := anon.do("POST", "/api/auth/verify-email", map[string]any{"token": "bogus"}); r.Status != 400 {
		t.Fatalf("bogus token: got %d, want 400", r.Status)
	}
	wantValidation(t, anon.do("POST", "/api/auth/verify-email", map[string]any{"token": ""}), "body", "token")
	anon.must(204, "POST", "/api/auth/verify-email", map[string]any{"token": tok})
	if v := a.must(200, "GET", "/api/auth/me", nil).JSON()["email_verified"]; v != true {
		t.Fatalf("email_verified: got %v, want true", v)
	}
	if r := anon.do("POST", "/api/auth/verify-email", map[string]any{"token": tok}); r.Status != 400 {
		t.Fatalf("second use: got %d, want 400", r.Status)
	}
	// A verified address gets no more verification mail.
	anon.must(200, "POST", "/api/auth/resend-verify", map[string]any{"email": "ada@example.com"})
	if n := len(env.mailTokens("ada@example.com", "Verify")); n != 1 {
		t.Fatalf("verify mails after verification: got %d, want 1", n)
	}
	// Verification tokens expire after 48 hours.
	env2 := newEnv(t)
	env2.UseClock()
	b := env2.register("bob@example.com")
	// The mail goes out after the answer: read it (its token is minted) before moving the clock.
	bobTok := env2.lastMailToken("bob@example.com", "Verify")
	env2.Advance(49 * time.Hour)
	if r := b.do("POST", "/api/auth/verify-email", map[string]any{"token": bobTok}); r.Status != 400 {
		t.Fatalf("expired verify token: got %d, want 400", r.Status)
	}
}

func TestChangePassword(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	a := env.register("ada@example.com")
	other := env.login("ada@example.com", pw)
	wantValidation(t, a.do("POST", "/api/auth/change-password", map[string]any{"current_password": "wrong", "new_password": "a new password"}), "body", "current_password")
	wantValidation(t, a.do("POST", "/api/auth/change-password", map[string]any{"current_password": pw, "new_password": "short"}), "body", "new_password")
	wantValidation(t, a.do("POST", "/api/auth/change-password", map[string]any{"new_password": "a new password"}), "body", "current_password")
	a.must(204, "POST", "/api/auth/change-password", map[string]any{"current_password": pw, "new_password": "a new password"})
	// This session goes on; the others end with the old password.
	a.must(200, "GET", "/api/auth/me", nil)
	a.must(200, "POST", "/api/auth/refresh", nil)
	want401(t, "other session", other.do("GET", "/api/auth/me", nil))
	want401(t, "old password", env.newClient().do("POST", "/api/auth/login", map[string]any{"email": "ada@example.com", "password": pw}))
	env.login("ada@example.com", "a new password")
	want401(t, "no credential", env.newClient().do("POST", "/api/auth/change-password", map[string]any{"current_password": pw, "new_password": "whatever123"}))
}
