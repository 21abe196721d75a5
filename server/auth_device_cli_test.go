package server_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/cliclient"
)

// TestOpsagentLoginLogout runs the `opsagent login` subcommand against the
// running server while another client (the browser) approves the grant, then
// `opsagent logout`.
func TestOpsagentLoginLogout(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	owner := env.register("nia@example.com")
	path := filepath.Join(t.TempDir(), "cfg", "opsagent", "credentials.json")
	getenv := func(k string) string {
		if k == "OPSAGENT_CREDENTIALS" {
			return path
		}
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := cliclient.Run(ctx, "login", []string{"--server", env.URL}, getenv, pw, io.Discard)
		pw.CloseWithError(io.EOF)
		done <- err
	}()
	code := regexp.MustCompile(`code: ([A-Z]{4}-[A-Z]{4})`)
	sc := bufio.NewScanner(pr)
	userCode := ""
	for userCode == "" && sc.Scan() {
		if m := code.FindStringSubmatch(sc.Text()); m != nil {
			userCode = m[1]
		}
	}
	if userCode == "" {
		t.Fatalf("login printed no user code (%v)", <-done)
	}
	go io.Copy(io.Discard, pr)
	info := owner.must(200, "GET", "/api/auth/cli-grant/info?user_code="+userCode, nil).JSON()
	if info["client_name"] == "" {
		t.Fatalf("grant info %v", info)
	}
	owner.must(204, "POST", "/api/auth/cli-grant/redeem", map[string]any{"user_code": userCode})
	if err := <-done; err != nil {
		t.Fatalf("opsagent login: %v", err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("credentials mode %v, want 0600", st.Mode().Perm())
	}
	creds, err := cliclient.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cli := env.newClient()
	cli.Token = creds.AccessToken
	cli.must(200, "GET", "/api/auth/me", nil)

	if err := cliclient.Run(ctx, "logout", nil, getenv, io.Discard, io.Discard); err != nil {
		t.Fatalf("opsagent logout: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("credentials still present after logout: %v", err)
	}
	cli.must(401, "GET", "/api/auth/me", nil)
	// The refresh token died with the session.
	r := env.newClient().do("POST", "/api/auth/refresh", map[string]any{"refresh_token": creds.RefreshToken})
	if r.Status != 401 {
		t.Fatalf("refresh after logout: %d", r.Status)
	}
	// Logging out again says so rather than pretending.
	if err := cliclient.Run(ctx, "logout", nil, getenv, io.Discard, io.Discard); err == nil {
		t.Fatal("second logout reported success")
	}
}

// TestOpsagentLoginDenied: a refused grant ends the command with an error and no file.
func TestOpsagentLoginDenied(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	owner := env.register("oz@example.com")
	path := filepath.Join(t.TempDir(), "credentials.json")
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := cliclient.Login(context.Background(), cliclient.Options{Server: env.URL, Path: path, Out: pw})
		pw.CloseWithError(io.EOF)
		done <- err
	}()
	sc := bufio.NewScanner(pr)
	code := regexp.MustCompile(`code: ([A-Z]{4}-[A-Z]{4})`)
	userCode := ""
	for userCode == "" && sc.Scan() {
		if m := code.FindStringSubmatch(sc.Text()); m != nil {
			userCode = m[1]
		}
	}
	go io.Copy(io.Discard, pr)
	owner.must(204, "POST", "/api/auth/cli-grant/deny", map[string]any{"user_code": userCode})
	if err := <-done; err == nil {
		t.Fatal("login succeeded after deny")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("credentials written after deny")
	}
}
