package server_test

import (
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// totpCode computes the code an authenticator app shows at t (pquerna/otp).
func totpCode(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	code, err := totp.GenerateCodeCustom(secret, at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// enrolTOTP runs setup and verify and returns the secret and the backup codes.
func enrolTOTP(t *testing.T, env *testEnv, c *client) (string, []string) {
	t.Helper()
	var setup struct {
		Secret, OtpauthURL, SetupToken string
		QR                             string `json:"qr_code"`
	}
	r := c.must(200, "POST", "/api/auth/mfa/totp/setup", nil)
	r.decode(t, &setup)
	setup.OtpauthURL, setup.SetupToken = r.JSON()["otpauth_url"].(string), r.JSON()["setup_token"].(string)
	var out struct {
		Method      map[string]any `json:"method"`
		BackupCodes []string       `json:"backup_codes"`
	}
	c.must(200, "POST", "/api/auth/mfa/totp/verify", map[string]any{"setup_token": setup.SetupToken, "code": totpCode(t, setup.Secret, env.clock())}).decode(t, &out)
	if out.Method["kind"] != "totp" {
		t.Fatalf("enrolled method %v, want totp", out.Method)
	}
	return setup.Secret, out.BackupCodes
}

// startLogin signs in with the password and returns the mfa_token.
func startLogin(t *testing.T, env *testEnv, email string) (string, []any) {
	t.Helper()
	r := env.newClient().must(200, "POST", "/api/auth/login", map[string]any{"email": email, "password": "correct horse battery"})
	m := r.JSON()
	if m["mfa_required"] != true || m["mfa_token"] == nil || m["access_token"] != nil {
		t.Fatalf("login did not ask for a second factor: %s", r.Body)
	}
	return m["mfa_token"].(string), m["mfa_methods"].([]any)
}

// challenge posts a factor with an mfa_token from a fresh client.
func challenge(env *testEnv, mfaToken string, body map[string]any) *resp {
	b := map[string]any{"mfa_token": mfaToken}
	for k, v := range body {
		b[k] = v
	}
	return env.newClient().do("POST", "/api/auth/mfa/challenge", b)
}
