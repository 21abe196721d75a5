package server_test

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/server/auth"
)

// signWithServerKey signs claims with the key the server generated into its
// data directory, using golang-jwt directly (not our signer).
func signWithServerKey(t *testing.T, env *testEnv, method jwt.SigningMethod, claims jwt.MapClaims) string {
	t.Helper()
	key, err := os.ReadFile(filepath.Join(env.Dir, "keys", "jwt.key"))
	if err != nil {
		t.Fatal(err)
	}
	var k any = key
	if method == jwt.SigningMethodNone {
		k = jwt.UnsafeAllowNoneSignatureType
	}
	tok, err := jwt.NewWithClaims(method, claims).SignedString(k)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func want401(t *testing.T, what string, r *resp) {
	t.Helper()
	if r.Status != 401 || r.Header.Get("WWW-Authenticate") != "Bearer" {
		t.Fatalf("%s: got %d %s (WWW-Authenticate %q), want 401 with WWW-Authenticate: Bearer", what, r.Status, r.Body, r.Header.Get("WWW-Authenticate"))
	}
}

func TestBadAccessTokensAre401(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.UseClock()
	c := env.register("ada@example.com")
	good := c.Token
	var claims jwt.MapClaims
	if _, _, err := jwt.NewParser().ParseUnverified(good, &claims); err != nil {
		t.Fatal(err)
	}
	c.must(200, "GET", "/api/auth/me", nil)

	forged := func(edit func(jwt.MapClaims)) jwt.MapClaims {
		m := jwt.MapClaims{}
		for k, v := range claims {
			m[k] = v
		}
		edit(m)
		return m
	}
	parts := strings.Split(good, ".")
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sig[0] ^= 0xff
	tampered := parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(sig)
	// Claims changed (another subject) but the old signature kept.
	otherBody, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, forged(func(m jwt.MapClaims) { m["sub"] = "01900000-0000-7000-8000-000000000000" })).SigningString()
	swapped := otherBody + "." + parts[2]

	cases := map[string]string{
		"garbage":             "not-a-token",
		"empty segments":      "..",
		"tampered signature":  tampered,
		"claims swapped":      swapped,
		"alg none":            signWithServerKey(t, env, jwt.SigningMethodNone, claims),
		"HS512 with same key": signWithServerKey(t, env, jwt.SigningMethodHS512, claims),
		"foreign key":         mustSign(t, []byte(strings.Repeat("k", 64)), claims),
		"no typ":              signWithServerKey(t, env, jwt.SigningMethodHS256, forged(func(m jwt.MapClaims) { delete(m, "typ") })),
		"reset typ":           signWithServerKey(t, env, jwt.SigningMethodHS256, forged(func(m jwt.MapClaims) { m["typ"] = "reset" })),
		"no exp":              signWithServerKey(t, env, jwt.SigningMethodHS256, forged(func(m jwt.MapClaims) { delete(m, "exp") })),
		"other issuer":        signWithServerKey(t, env, jwt.SigningMethodHS256, forged(func(m jwt.MapClaims) { m["iss"] = "someone" })),
		"mfa token":           server.IssueTokenForTest(env.Srv, auth.TypeMFA, c.userID(), claims["sid"].(string), claims["org"].(string), 5*time.Minute),
		"huge":                strings.Repeat("A", 60<<10),
	}
	for name, tok := range cases {
		t.Run(name, func(t *testing.T) {
			x := env.newClient()
			x.Token = tok
			want401(t, name, x.do("GET", "/api/auth/me", nil))
			// The same token in the cookie is refused the same way.
			req, _ := http.NewRequest("GET", env.URL+"/api/auth/me", nil)
			req.AddCookie(&http.Cookie{Name: "svc_access_token", Value: tok})
			want401(t, name+" (cookie)", env.newClient().send(req))
		})
	}
	want401(t, "no credential", env.newClient().do("GET", "/api/auth/me", nil))
	x := env.newClient()
	x.Header.Set("Authorization", "Basic YTpi")
	want401(t, "basic auth", x.do("GET", "/api/auth/me", nil))

	// Expiry: 15 minutes (plus a few seconds of leeway) later the token is dead.
	env.Advance(14 * time.Minute)
	c.must(200, "GET", "/api/auth/me", nil)
	env.Advance(2 * time.Minute)
	want401(t, "expired", c.do("GET", "/api/auth/me", nil))
	if !strings.Contains(env.Logs.String(), "status=401") || strings.Contains(env.Logs.String(), "panic") {
		t.Fatal("expected 401s in the access log and no panic")
	}
}

func mustSign(t *testing.T, key []byte, claims jwt.MapClaims) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestCookieAuthRefusesCrossOriginUnsafeRequests(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := env.register("ada@example.com")
	c.Token = "" // the cookie jar carries the access cookie, like a browser
	c.must(200, "PATCH", "/api/auth/me", map[string]any{"name": "same origin"})

	c.Header.Set("Origin", "https://evil.example")
	if r := c.do("PATCH", "/api/auth/me", map[string]any{"name": "forged"}); r.Status != 403 {
		t.Fatalf("cookie + foreign Origin: got %d %s, want 403", r.Status, r.Body)
	}
	c.Header.Del("Origin")
	c.Header.Set("Sec-Fetch-Site", "cross-site")
	if r := c.do("PATCH", "/api/auth/me", map[string]any{"name": "forged"}); r.Status != 403 {
		t.Fatalf("cookie + Sec-Fetch-Site cross-site: got %d, want 403", r.Status)
	}
	// Safe methods are not state-changing, so reading is allowed.
	c.must(200, "GET", "/api/auth/me", nil)
	c.Header.Del("Sec-Fetch-Site")
	if name := c.must(200, "GET", "/api/auth/me", nil).JSON()["name"]; name != "same origin" {
		t.Fatalf("a refused request changed the profile: name %v", name)
	}
	// The token-exempt routes that read the refresh cookie are guarded too:
	// another site cannot rotate or end the session through the browser.
	c.Header.Set("Origin", "https://evil.example")
	for _, path := range []string{"/api/auth/refresh", "/api/auth/logout"} {
		if r := c.do("POST", path, nil); r.Status != 403 || r.JSON()["code"] != "cross_origin" {
			t.Fatalf("cookie POST %s from a foreign origin: got %d %s, want 403 cross_origin", path, r.Status, r.Body)
		}
	}
	c.Header.Del("Origin")
	c.must(200, "POST", "/api/auth/refresh", nil) // the session survived
	// A bearer token is not sent by browsers on their own: no forgery risk.
	b := env.login("ada@example.com", pw)
	b.Header.Set("Origin", "https://evil.example")
	b.must(200, "PATCH", "/api/auth/me", map[string]any{"name": "api client"})
}

func TestLogoutAllIsForPeopleOnly(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := env.register("ada@example.com")
	created := c.must(201, "POST", "/api/api-keys", map[string]any{"name": "ci", "scopes": []string{"*"}}).JSON()
	k := env.newClient()
	k.Token = created["key"].(string)
	k.must(200, "GET", "/api/auth/me", nil) // AuthAny: keys may read
	r := k.do("POST", "/api/auth/logout-all", nil)
	if r.Status != 403 || r.JSON()["code"] != "human_only" {
		t.Fatalf("logout-all with an API key: got %d %s, want 403 human_only", r.Status, r.Body)
	}
	for _, path := range []string{"/api/auth/sessions"} {
		if r := k.do("GET", path, nil); r.Status != 403 {
			t.Fatalf("GET %s with an API key: got %d, want 403", path, r.Status)
		}
	}
	// The person's session is untouched.
	c.must(200, "GET", "/api/auth/me", nil)
	k.Token = "opsk_wrong"
	want401(t, "unknown key", k.do("GET", "/api/auth/me", nil))
}

func TestBodyOverLimitIs413WithoutReadingIt(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	addr := strings.TrimPrefix(env.URL, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Announce 1 GiB, send a few bytes, and wait: the answer must come now.
	fmt.Fprintf(conn, "POST /api/auth/login HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"email\":", addr, 1<<30)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer before the body was sent: %v", err)
	}
	if res.StatusCode != 413 {
		t.Fatalf("got %d, want 413", res.StatusCode)
	}

	// Without a Content-Length (chunked), the cap stops the read at the limit.
	c := env.newClient()
	big := `{"email":"` + strings.Repeat("a", 20<<10) + `@example.com","password":"x"}`
	req := mustRequest(t, "POST", env.URL+"/api/auth/login", "application/json", "")
	req.Body = ioNopCloser(strings.NewReader(big))
	req.ContentLength = -1
	if r := c.send(req); r.Status != 413 {
		t.Fatalf("chunked body over the limit: got %d %s, want 413", r.Status, r.Body)
	}
	// The default limit applies to routes without their own.
	small := newEnv(t, func(c *server.Config) { c.MaxBodyBytes = 1 << 10 })
	a := small.register("ada@example.com")
	if r := a.do("PATCH", "/api/auth/me", map[string]any{"name": strings.Repeat("x", 1<<10)}); r.Status != 413 {
		t.Fatalf("over the configured default limit: got %d, want 413", r.Status)
	}
}
