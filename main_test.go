package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/internal/testkit"
)

// syncBuffer is a buffer safe for the server's goroutines to write.
type syncBuffer = testkit.SyncBuffer

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

var listening = testkit.Listening

// TestServeEndToEnd boots the binary's run on port 0, answers a request, and
// drains on cancellation the way SIGTERM does.
func TestServeEndToEnd(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir}, env(map[string]string{"OPSAGENT_LOG_LEVEL": "info"}), &stdout, &stderr)
	}()
	var addr string
	deadline := time.Now().Add(30 * time.Second)
	for addr == "" {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
			break
		}
		select {
		case err := <-done:
			t.Fatalf("run returned before listening: %v\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not report its address:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	res, err := http.Get("http://" + addr + "/api/version")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	_ = json.NewDecoder(res.Body).Decode(&v)
	res.Body.Close()
	if res.StatusCode != 200 || v["version"] != "0.1.0" {
		t.Fatalf("GET /api/version: %d %v", res.StatusCode, v)
	}
	// A request in flight when the signal comes is answered before exit.
	slow := make(chan int, 1)
	go func() {
		r, err := http.Post("http://"+addr+"/api/auth/register", "application/json",
			strings.NewReader(`{"email":"ada@example.com","password":"correct horse battery"}`))
		if err != nil {
			slow <- 0
			return
		}
		r.Body.Close()
		slow <- r.StatusCode
	}()
	time.Sleep(5 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run after cancel: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	if code := <-slow; code != 201 && code != 0 {
		t.Fatalf("request during shutdown: got %d", code)
	}
	if !strings.Contains(stderr.String(), "shutting down") {
		t.Fatalf("no shutdown in the log:\n%s", stderr.String())
	}
	// The data directory holds the database and private keys.
	for path, mode := range map[string]os.FileMode{"opsagent.db": 0, "keys/jwt.key": 0o600, "outbox": 0, "avatars": 0} {
		st, err := os.Stat(filepath.Join(dir, path))
		if err != nil {
			t.Fatalf("data dir lacks %s: %v", path, err)
		}
		if mode != 0 && st.Mode().Perm() != mode {
			t.Fatalf("%s: mode %o, want %o", path, st.Mode().Perm(), mode)
		}
	}
}

func TestFlagsOverrideEnvironment(t *testing.T) {
	var out, errb bytes.Buffer
	vars := map[string]string{"OPSAGENT_ADDR": "0.0.0.0:9000", "OPSAGENT_SIGNUP": "closed", "OPSAGENT_DATA_DIR": "/srv/opsagent", "OPSAGENT_TRUST_PROXY": "true", "OPSAGENT_SHUTDOWN_TIMEOUT": "3s"}
	if err := run(context.Background(), []string{"serve", "--print-config", "--addr", "127.0.0.1:7000"}, env(vars), &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	for _, want := range []string{"addr=127.0.0.1:7000\n", "signup=closed\n", "data_dir=/srv/opsagent\n", "trust_proxy=true\n", "shutdown_timeout=3s\n"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("print-config lacks %q:\n%s", want, out.String())
		}
	}
	// A variable that does not parse is an error naming it.
	err := run(context.Background(), []string{"serve", "--print-config"}, env(map[string]string{"OPSAGENT_MAX_BODY_BYTES": "lots"}), &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "OPSAGENT_MAX_BODY_BYTES") {
		t.Fatalf("bad variable: got %v", err)
	}
	// So is an invalid value, before anything is opened.
	err = run(context.Background(), []string{"serve", "--signup", "sometimes", "--data-dir", t.TempDir()}, env(nil), &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "signup") {
		t.Fatalf("bad signup: got %v", err)
	}
}

func TestServeHelpListsEveryFlagWithItsVariable(t *testing.T) {
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"serve", "--help"}, env(nil), &out, &errb)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("serve --help: got %v", err)
	}
	help := errb.String()
	for _, name := range []string{"addr", "data-dir", "base-url", "signup", "smtp-url", "mail-from", "llm-provider", "llm-base-url",
		"llm-api-key", "llm-model", "vault-passphrase", "log-level", "log-format", "trust-proxy", "disable-password-reset",
		"max-body-bytes", "shutdown-timeout"} {
		envName := "OPSAGENT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		if !regexp.MustCompile(`(?m)^  -` + name + `\b[^\n]*\n[^\n]*\(env ` + envName + `\)`).MatchString(help) {
			t.Fatalf("--help does not list -%s with %s:\n%s", name, envName, help)
		}
	}
	if !strings.Contains(help, "-print-config") {
		t.Fatal("--help lacks -print-config")
	}
}

func TestPrintConfigRedactsSecrets(t *testing.T) {
	var out, errb bytes.Buffer
	secrets := map[string]string{
		"OPSAGENT_LLM_API_KEY":      "sk-live-very-secret",
		"OPSAGENT_VAULT_PASSPHRASE": "open sesame",
		"OPSAGENT_SMTP_URL":         "smtp://mailer:smtp-pass-123@mail.example:587",
	}
	if err := run(context.Background(), []string{"serve", "--print-config"}, env(secrets), &out, &errb); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"sk-live-very-secret", "open sesame", "smtp-pass-123"} {
		if strings.Contains(out.String(), s) {
			t.Fatalf("print-config shows %q:\n%s", s, out.String())
		}
	}
	for _, want := range []string{"llm_api_key=[redacted]", "vault_passphrase=[redacted]", "smtp_url=smtp://mailer:redacted@mail.example:587"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("print-config lacks %q:\n%s", want, out.String())
		}
	}
}

func TestCommands(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"version"}, env(nil), &out, &errb); err != nil || !strings.Contains(out.String(), "0.1.0") {
		t.Fatalf("version: %v %q", err, out.String())
	}
	// The overview teaches the token's variable, as the README does: a
	// --token on a command line is seen by everyone on the host (ps).
	out.Reset()
	if err := run(context.Background(), []string{"--help"}, env(nil), &out, &errb); err != nil ||
		strings.Contains(out.String(), "--token") || !strings.Contains(out.String(), "OPSAGENT_CONNECTOR_TOKEN=ocn_") {
		t.Fatalf("--help: %v\n%s", err, out.String())
	}
	if err := run(context.Background(), nil, env(nil), &out, &errb); err == nil {
		t.Fatal("no command: want an error")
	}
	if err := run(context.Background(), []string{"frobnicate"}, env(nil), &out, &errb); err == nil || !strings.Contains(errb.String(), "Usage") {
		t.Fatalf("unknown command: %v", err)
	}
}
