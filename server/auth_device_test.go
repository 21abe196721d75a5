package server_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

func deviceConfig(env *testEnv) *oauth2.Config {
	return &oauth2.Config{ClientID: "test-cli", Endpoint: oauth2.Endpoint{
		DeviceAuthURL: env.URL + "/api/auth/device-code", TokenURL: env.URL + "/api/auth/device-token",
		AuthStyle: oauth2.AuthStyleInParams}}
}

var userCodeRe = regexp.MustCompile(`^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$`)

// TestDeviceFlowWithOAuth2Client drives the whole sign-in with
// golang.org/x/oauth2's RFC 8628 client (form-encoded requests).
func TestDeviceFlowWithOAuth2Client(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	owner := env.register("lu@example.com")
	cfg := deviceConfig(env)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	da, err := cfg.DeviceAuth(ctx, oauth2.SetAuthURLParam("client_name", "laptop"))
	if err != nil {
		t.Fatal(err)
	}
	if !userCodeRe.MatchString(da.UserCode) || da.Interval < 1 || da.Expiry.IsZero() ||
		!strings.HasPrefix(da.VerificationURI, env.URL) || !strings.Contains(da.VerificationURIComplete, da.UserCode) {
		t.Fatalf("device authorization response %+v", da)
	}
	// The browser side: what is asking (looked up case-insensitively), then approve.
	info := owner.must(200, "GET", "/api/auth/cli-grant/info?user_code="+url.QueryEscape(strings.ToLower(da.UserCode)), nil).JSON()
	if info["client_name"] != "laptop" || info["ip"] != "127.0.0.1" || info["status"] != "pending" {
		t.Fatalf("grant info %v", info)
	}
	owner.must(204, "POST", "/api/auth/cli-grant/redeem", map[string]any{"user_code": da.UserCode})
	tok, err := cfg.DeviceAccessToken(ctx, da)
	if err != nil {
		t.Fatalf("device access token: %v", err)
	}
	if tok.RefreshToken == "" || tok.TokenType != "bearer" {
		t.Fatalf("token %+v lacks a refresh token", tok)
	}
	cli := env.newClient()
	cli.Token = tok.AccessToken
	if me := cli.must(200, "GET", "/api/auth/me", nil).JSON(); me["email"] != "lu@example.com" || me["role"] != "owner" {
		t.Fatalf("cli acts as %v", me)
	}
	// The CLI's credential is a session the user sees and can revoke.
	var cliSession string
	for _, s := range owner.must(200, "GET", "/api/auth/sessions", nil).List() {
		if s["kind"] == "cli" {
			cliSession = s["id"].(string)
		}
	}
	if cliSession == "" {
		t.Fatal("no cli session listed")
	}
	// A redeemed grant cannot be redeemed (or denied) again, nor its device_code reused.
	owner.must(409, "POST", "/api/auth/cli-grant/redeem", map[string]any{"user_code": da.UserCode})
	owner.must(409, "POST", "/api/auth/cli-grant/deny", map[string]any{"user_code": da.UserCode})
	_, err = cfg.DeviceAccessToken(ctx, da)
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" || re.Response.StatusCode != 400 {
		t.Fatalf("second exchange: %v, want invalid_grant", err)
	}
	owner.must(204, "DELETE", "/api/auth/sessions/"+cliSession, nil)
	cli.must(401, "GET", "/api/auth/me", nil)
}

// poll posts one JSON device-token request.
func poll(env *testEnv, deviceCode string) (int, string) {
	r := env.newClient().do("POST", "/api/auth/device-token", map[string]any{"grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": deviceCode})
	e, _ := r.JSON()["error"].(string)
	return r.Status, e
}

func startDevice(t *testing.T, env *testEnv) (deviceCode, userCode string) {
	t.Helper()
	m := env.newClient().must(200, "POST", "/api/auth/device-code", map[string]any{"client_id": "json-cli"}).JSON()
	return m["device_code"].(string), m["user_code"].(string)
}

func TestDeviceTokenErrors(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.UseClock()
	owner := env.register("max@example.com")

	dc, uc := startDevice(t, env)
	if s, e := poll(env, dc); s != 400 || e != "authorization_pending" {
		t.Fatalf("first poll: %d %s", s, e)
	}
	if s, e := poll(env, dc); s != 400 || e != "slow_down" {
		t.Fatalf("immediate second poll: %d %s, want slow_down", s, e)
	}
	// slow_down raised the interval from 2 to 7 seconds.
	env.Advance(3 * time.Second)
	if _, e := poll(env, dc); e != "slow_down" {
		t.Fatalf("poll after 3s with a 7s interval: %s", e)
	}
	// That one was too fast again: 12 seconds now (3/4 of it is tolerated).
	env.Advance(10 * time.Second)
	if _, e := poll(env, dc); e != "authorization_pending" {
		t.Fatalf("poll after 10s with a 12s interval: %s", e)
	}
	// Denied: the poller learns access_denied; the grant cannot be redeemed afterwards.
	owner.must(204, "POST", "/api/auth/cli-grant/deny", map[string]any{"user_code": strings.ReplaceAll(uc, "-", "")})
	env.Advance(15 * time.Second)
	if _, e := poll(env, dc); e != "access_denied" {
		t.Fatalf("after deny: %s", e)
	}
	owner.must(409, "POST", "/api/auth/cli-grant/redeem", map[string]any{"user_code": uc})

	// Expired.
	dc2, uc2 := startDevice(t, env)
	env.Advance(11 * time.Minute)
	if _, e := poll(env, dc2); e != "expired_token" {
		t.Fatalf("after 11 minutes: %s", e)
	}
	owner.must(404, "GET", "/api/auth/cli-grant/info?user_code="+uc2, nil)
	owner.must(404, "POST", "/api/auth/cli-grant/redeem", map[string]any{"user_code": uc2})

	// Unknown codes, wrong grant types, missing fields; form bodies work like JSON.
	if _, e := poll(env, "nope"); e != "invalid_grant" {
		t.Fatalf("unknown device_code: %s", e)
	}
	res, err := http.PostForm(env.URL+"/api/auth/device-token", url.Values{"grant_type": {"password"}, "device_code": {"x"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 400 {
		t.Fatalf("wrong grant_type: %d", res.StatusCode)
	}
	r := env.newClient().do("POST", "/api/auth/device-token", map[string]any{})
	if r.Status != 400 || r.JSON()["error"] != "invalid_request" {
		t.Fatalf("missing device_code: %d %s", r.Status, r.Body)
	}
	// An API key or no session cannot approve.
	env.newClient().must(401, "POST", "/api/auth/cli-grant/redeem", map[string]any{"user_code": uc})
}

func TestUserCodeGuessingIsRateLimited(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.UseClock()
	mallory := env.register("mal@example.com")
	dc, uc := startDevice(t, env)
	guesses := []string{"BBBB-BBBB", "CCCC-CCCC", "not a code", "DDDDDDDD"}
	limited := false
	for i := 0; i < 40 && !limited; i++ {
		r := mallory.do("POST", "/api/auth/cli-grant/redeem", map[string]any{"user_code": guesses[i%len(guesses)]})
		switch r.Status {
		case 404:
		case 429:
			if r.Header.Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
			limited = true
			if i > 30 {
				t.Fatalf("limited only after %d guesses", i)
			}
		default:
			t.Fatalf("guess %d: %d %s", i, r.Status, r.Body)
		}
	}
	if !limited {
		t.Fatal("40 wrong user codes were never rate limited")
	}
	// Even the right code is refused while limited; the grant stays pending.
	mallory.must(429, "POST", "/api/auth/cli-grant/redeem", map[string]any{"user_code": uc})
	if _, e := poll(env, dc); e != "authorization_pending" {
		t.Fatalf("grant after guessing: %s", e)
	}
}
