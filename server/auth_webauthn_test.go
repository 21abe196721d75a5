package server_test

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/json"
	"testing"
	"time"

	"github.com/descope/virtualwebauthn"

	"github.com/opsagent/opsagent/server"
)

// The relying party as the server derives it from OPSAGENT_BASE_URL.
var testRP = virtualwebauthn.RelyingParty{Name: "opsagent", ID: "ops.example.test", Origin: "https://ops.example.test"}

func webauthnEnv(t *testing.T) *testEnv {
	return newEnv(t, openSignup, func(c *server.Config) { c.BaseURL = "https://ops.example.test" })
}

// newEC2Credential is a virtual P-256 credential whose public key a real
// authenticator could send: virtualwebauthn encodes the key's coordinates
// with big.Int.Bytes(), which drops leading zero bytes (about one key in
// 128), and go-webauthn rightly rejects a coordinate shorter than 32 bytes
// ("did not verify" at registration, seen once in CI). Such keys are drawn
// again.
func newEC2Credential(t *testing.T) virtualwebauthn.Credential {
	t.Helper()
	for {
		cred := virtualwebauthn.NewCredential(virtualwebauthn.KeyTypeEC2)
		k, err := x509.ParsePKCS8PrivateKey(cred.Key.Data)
		if err != nil {
			t.Fatalf("virtual key: %v", err)
		}
		pub := k.(*ecdsa.PrivateKey)
		if len(pub.X.Bytes()) == 32 && len(pub.Y.Bytes()) == 32 {
			return cred
		}
	}
}

// registerKey registers a virtual security key and returns it.
func registerKey(t *testing.T, c *client) (virtualwebauthn.Authenticator, virtualwebauthn.Credential, []string) {
	t.Helper()
	authr := virtualwebauthn.NewAuthenticator()
	cred := newEC2Credential(t)
	opts := c.must(200, "POST", "/api/auth/mfa/webauthn/register/options", nil)
	parsed, err := virtualwebauthn.ParseAttestationOptions(string(opts.Body))
	if err != nil {
		t.Fatalf("parse registration options %s: %v", opts.Body, err)
	}
	if parsed.RelyingPartyID != testRP.ID {
		t.Fatalf("rp id %q, want %q from the base URL", parsed.RelyingPartyID, testRP.ID)
	}
	att := virtualwebauthn.CreateAttestationResponse(testRP, authr, cred, *parsed)
	var out struct {
		Method      map[string]any `json:"method"`
		BackupCodes []string       `json:"backup_codes"`
	}
	c.must(200, "POST", "/api/auth/mfa/webauthn/register/verify", map[string]any{"credential": json.RawMessage(att), "name": "yubi"}).decode(t, &out)
	if out.Method["kind"] != "webauthn" || out.Method["name"] != "yubi" {
		t.Fatalf("registered %v", out.Method)
	}
	// The same registration response again: its challenge is spent.
	r := c.do("POST", "/api/auth/mfa/webauthn/register/verify", map[string]any{"credential": json.RawMessage(att)})
	if r.Status != 400 || r.JSON()["code"] != "webauthn_challenge" {
		t.Fatalf("replayed registration: %d %s", r.Status, r.Body)
	}
	authr.AddCredential(cred)
	return authr, cred, out.BackupCodes
}

// assertion asks for options with the mfa_token alone and signs them.
func assertion(t *testing.T, env *testEnv, mfaToken string, authr virtualwebauthn.Authenticator, cred virtualwebauthn.Credential) string {
	t.Helper()
	r := env.newClient().must(200, "POST", "/api/auth/mfa/webauthn/auth/options", map[string]any{"mfa_token": mfaToken})
	opts, err := virtualwebauthn.ParseAssertionOptions(string(r.Body))
	if err != nil {
		t.Fatalf("parse assertion options %s: %v", r.Body, err)
	}
	return virtualwebauthn.CreateAssertionResponse(testRP, authr, cred, *opts)
}

func TestWebAuthnRegisterAndSignIn(t *testing.T) {
	t.Parallel()
	env := webauthnEnv(t)
	env.UseClock()
	c := env.register("jo@example.com")
	authr, cred, codes := registerKey(t, c)
	if len(codes) != 10 {
		t.Fatalf("first method brought %d backup codes", len(codes))
	}
	tok, methods := startLogin(t, env, "jo@example.com")
	if len(methods) != 2 || methods[0] != "webauthn" {
		t.Fatalf("mfa_methods = %v", methods)
	}
	// The options route takes no other credential: no token, a bad token, or an access token is 401.
	anon := env.newClient()
	anon.must(401, "POST", "/api/auth/mfa/webauthn/auth/options", map[string]any{"mfa_token": c.Token})
	anon.must(401, "POST", "/api/auth/mfa/webauthn/auth/options", map[string]any{"mfa_token": "x.y.z"})
	anon.must(401, "POST", "/api/auth/mfa/webauthn/auth/options", map[string]any{})

	// Counter 0 then 0: an authenticator without a counter (as virtualwebauthn is by default).
	resp := assertion(t, env, tok, authr, cred)
	r := challenge(env, tok, map[string]any{"method": "webauthn", "credential": json.RawMessage(resp)})
	if r.Status != 200 || r.JSON()["access_token"] == nil {
		t.Fatalf("webauthn sign-in: %d %s", r.Status, r.Body)
	}
	// The same assertion again: the challenge was single-use.
	tok, _ = startLogin(t, env, "jo@example.com")
	if r := challenge(env, tok, map[string]any{"method": "webauthn", "credential": json.RawMessage(resp)}); r.Status != 401 {
		t.Fatalf("replayed assertion: %d %s", r.Status, r.Body)
	}
	// A key with a real counter: 0 -> 5 is fine.
	cred.Counter = 5
	if r := challenge(env, tok, map[string]any{"method": "webauthn", "credential": json.RawMessage(assertion(t, env, tok, authr, cred))}); r.Status != 200 {
		t.Fatalf("counter 5 after 0: %d %s", r.Status, r.Body)
	}
	// 3 after 5, and 5 after 5: a possible clone, refused and audited.
	for _, n := range []uint32{3, 5} {
		cred.Counter = n
		tok, _ = startLogin(t, env, "jo@example.com")
		r := challenge(env, tok, map[string]any{"method": "webauthn", "credential": json.RawMessage(assertion(t, env, tok, authr, cred))})
		if r.Status != 401 || r.JSON()["code"] != "webauthn_counter" {
			t.Fatalf("counter %d after 5: %d %s, want 401 webauthn_counter", n, r.Status, r.Body)
		}
	}
	if got := c.must(200, "GET", "/api/audit-logs?action=auth.mfa_clone_warning", nil).JSON()["total"]; got != float64(2) {
		t.Fatalf("clone warnings in the audit log: got %v, want 2", got)
	}
	cred.Counter = 6
	tok, _ = startLogin(t, env, "jo@example.com")
	if r := challenge(env, tok, map[string]any{"method": "webauthn", "credential": json.RawMessage(assertion(t, env, tok, authr, cred))}); r.Status != 200 {
		t.Fatalf("counter 6 after 5: %d %s", r.Status, r.Body)
	}
}

func TestWebAuthnChallengeExpires(t *testing.T) {
	t.Parallel()
	env := webauthnEnv(t)
	env.UseClock()
	c := env.register("kim@example.com")
	authr, cred, _ := registerKey(t, c)
	tok, _ := startLogin(t, env, "kim@example.com")
	resp := assertion(t, env, tok, authr, cred)
	env.Advance(6 * time.Minute) // past the challenge's 5 minutes (the mfa_token lapses too: sign in again)
	tok2, _ := startLogin(t, env, "kim@example.com")
	if r := challenge(env, tok2, map[string]any{"method": "webauthn", "credential": json.RawMessage(resp)}); r.Status != 401 {
		t.Fatalf("expired challenge: %d %s", r.Status, r.Body)
	}
	// Registration challenges expire too.
	opts := c.must(200, "POST", "/api/auth/mfa/webauthn/register/options", nil)
	parsed, _ := virtualwebauthn.ParseAttestationOptions(string(opts.Body))
	env.Advance(6 * time.Minute)
	c2 := env.newClient()
	c2.Token = c.Token
	att := virtualwebauthn.CreateAttestationResponse(testRP, authr, newEC2Credential(t), *parsed)
	// The access token has lapsed with the clock too; sign in again for a fresh one.
	tok3, _ := startLogin(t, env, "kim@example.com")
	cred.Counter = 0
	r := challenge(env, tok3, map[string]any{"method": "webauthn", "credential": json.RawMessage(assertion(t, env, tok3, authr, cred))})
	c2.Token = r.JSON()["access_token"].(string)
	if r := c2.do("POST", "/api/auth/mfa/webauthn/register/verify", map[string]any{"credential": json.RawMessage(att)}); r.Status != 400 {
		t.Fatalf("expired registration challenge: %d %s", r.Status, r.Body)
	}
}
