package cli_test

import (
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/cliclient"
)

var userCode = regexp.MustCompile(`shows the code: (\S+)`)

// The stored sign-in: `opsagent login` (approved through the API as the
// console would), then client commands without OPSAGENT_TOKEN or
// OPSAGENT_SERVER; an expiring access token is refreshed and saved; a
// revoked sign-in is one line telling the user to log in again.
func TestStoredSignInIsUsedRefreshedAndReportedExpired(t *testing.T) {
	s := startServer(t)
	u := s.newUser("dev@example.com")
	home := t.TempDir()
	env := baseEnv(home) // the stored sign-in names the server

	login := exec.Command(bin, "login", "--server", s.URL)
	login.Env = env
	out := &syncBuf{}
	login.Stdout, login.Stderr = out, out
	if err := login.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	var code string
	for code == "" {
		if m := userCode.FindStringSubmatch(out.String()); m != nil {
			code = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no user code:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The grant page shows the approver which program asks: the client names itself.
	info := s.must(200, "GET", "/api/auth/cli-grant/info?user_code="+url.QueryEscape(code), u.token, "", nil)
	if ua, _ := info["user_agent"].(string); !regexp.MustCompile(`^opsagent-cli/\S+ \(` + runtime.GOOS + `\)$`).MatchString(ua) {
		t.Fatalf("the grant shows user agent %q", ua)
	}
	s.must(204, "POST", "/api/auth/cli-grant/redeem", u.token, "", map[string]any{"user_code": code})
	if err := login.Wait(); err != nil {
		t.Fatalf("login: %v\n%s", err, out.String())
	}

	// Signed in: the server comes from the stored sign-in.
	if who := ok(t, env, "whoami").stdout; !strings.Contains(who, "dev@example.com") || !strings.Contains(who, "opsagent login") {
		t.Fatalf("whoami:\n%s", who)
	}
	ok(t, env, "tasks", "create", "--name", "t", "--prompt", "p")
	// The API calls carry the same name (the audit log records it).
	audit := s.must(200, "GET", "/api/audit-logs?limit=200", u.token, "", nil)["items"].([]any)
	named := false
	for _, e := range audit {
		ua, _ := e.(map[string]any)["user_agent"].(string)
		named = named || strings.HasPrefix(ua, "opsagent-cli/")
	}
	if !named {
		t.Fatalf("no audit event carries the client's user agent: %v", audit)
	}

	// An access token about to expire is refreshed, and the rotated refresh token saved.
	path := filepath.Join(home, ".config", "opsagent", "credentials.json")
	before, err := cliclient.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	stale := *before
	stale.AccessToken, stale.Expiry = "stale", time.Now().Add(-time.Minute)
	if err := cliclient.Save(path, &stale); err != nil {
		t.Fatal(err)
	}
	ok(t, env, "tasks", "list")
	after, err := cliclient.Load(path)
	if err != nil || after.AccessToken == "stale" || after.RefreshToken == before.RefreshToken || !after.Expiry.After(time.Now()) {
		t.Fatalf("after refresh: %+v (%v)", after, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("credentials mode %v", st.Mode().Perm())
	}

	// A stored sign-in is never sent to another server.
	exits(t, 4, "stored sign-in is for", append(env, "OPSAGENT_SERVER=http://127.0.0.1:1"), "whoami")

	// Signed out everywhere: the refresh is refused, one clear line, exit 4.
	s.must(204, "POST", "/api/auth/logout-all", u.token, "", nil)
	b, _ := os.ReadFile(path)
	var c map[string]any
	_ = json.Unmarshal(b, &c)
	c["expiry"] = time.Now().Add(-time.Minute).Format(time.RFC3339)
	b, _ = json.Marshal(c)
	_ = os.WriteFile(path, b, 0o600)
	r := exits(t, 4, "run `opsagent login`", env, "tasks", "list")
	if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("more than one line: %q", r.stderr)
	}
}
