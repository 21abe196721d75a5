package main

import (
	"bytes"
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/sandbox"
	"github.com/opsagent/opsagent/store"
	"github.com/opsagent/opsagent/vault"
)

// doctorLines returns the check -> level of each report line.
func doctorLines(out string) map[string][]string {
	levels := map[string][]string{}
	for _, m := range regexp.MustCompile(`(?m)^(ok|warn|FAIL)\s+(\S+)\s`).FindAllStringSubmatch(out, -1) {
		levels[m[2]] = append(levels[m[2]], m[1])
	}
	return levels
}

func TestDoctorHealthyDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), filepath.Join(dir, "opsagent.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := vault.Open(filepath.Join(dir, "vault"), "", nil); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err = run(context.Background(), []string{"doctor", "--data-dir", dir, "--offline", "--base-url", "https://ops.example.com"}, env(nil), &out, &errb)
	if err != nil {
		t.Fatalf("doctor on a healthy dir: %v\n%s", err, out.String())
	}
	got := doctorLines(out.String())
	for _, check := range []string{"config", "data_dir", "disk", "database", "migrations", "vault", "base_url", "smtp", "sandbox", "sandbox_launcher"} {
		if len(got[check]) != 1 || got[check][0] != launcherWant(check) {
			t.Errorf("%s: %v\n%s", check, got[check], out.String())
		}
	}
	if sandbox.PrivateMountNamespace() && !strings.Contains(out.String(), "private mount namespace that hides the system sockets") {
		t.Errorf("the launcher line does not say the sockets are hidden:\n%s", out.String())
	}
}

// A data dir with every fault at once: doctor names each one with its fix,
// and exits non-zero.
func TestDoctorNamesEachFault(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil { // readable by others
		t.Fatal(err)
	}
	dbPath := filepath.Join(dir, "opsagent.db")
	db, err := store.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	// A migration this binary does not know: a newer opsagent ran here.
	raw, err := sql.Open("sqlite", "file:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO schema_migrations(name, applied_at) VALUES ('9999_from_the_future.sql', '2030-01-01T00:00:00Z')`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	// A passphrase-wrapped vault, and no passphrase given.
	if _, err := vault.Open(filepath.Join(dir, "vault"), "correct passphrase", nil); err != nil {
		t.Fatal(err)
	}
	// An LLM endpoint that refuses the key.
	llmSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`))
	}))
	defer llmSrv.Close()
	var out, errb bytes.Buffer
	err = run(context.Background(), []string{"doctor", "--data-dir", dir, "--disk-min-free", "1000000TiB"},
		env(map[string]string{"OPSAGENT_LLM_PROVIDER": "openai", "OPSAGENT_LLM_MODEL": "gpt-4o-mini",
			"OPSAGENT_LLM_API_KEY": "sk-wrong-key-123", "OPSAGENT_LLM_BASE_URL": llmSrv.URL + "/v1",
			"OPSAGENT_SMTP_URL": "smtp://127.0.0.1:1", "OPSAGENT_SIGNUP": "sometimes"}), &out, &errb)
	if err == nil {
		t.Fatalf("doctor passed a broken dir:\n%s", out.String())
	}
	text := out.String()
	got := doctorLines(text)
	for check, want := range map[string]string{
		"config":     "signup must be open, invite or closed",
		"data_dir":   "chmod 700",
		"disk":       "below the",
		"migrations": "newer opsagent",
		"vault":      "OPSAGENT_VAULT_PASSPHRASE",
		"llm":        "OPSAGENT_LLM_API_KEY",
		"smtp":       "cannot connect",
	} {
		if !slices.Contains(got[check], "FAIL") {
			t.Errorf("%s not reported as failing: %v", check, got[check])
		}
		if !strings.Contains(text, want) {
			t.Errorf("%s: report lacks %q", check, want)
		}
	}
	if got["clock"] == nil || got["clock"][0] != "ok" {
		t.Errorf("clock was not compared with the LLM endpoint's Date: %v", got["clock"])
	}
	if strings.Contains(text, "sk-wrong-key-123") {
		t.Errorf("doctor printed the API key")
	}

	// A damaged database file is named as such.
	if err := os.WriteFile(dbPath, []byte("this is not a database, it is a shopping list"), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	_ = run(context.Background(), []string{"doctor", "--data-dir", dir, "--offline"}, env(nil), &out, &errb)
	if got := doctorLines(out.String()); !slices.Contains(got["database"], "FAIL") || !strings.Contains(out.String(), "opsagent restore") {
		t.Errorf("damaged database not named:\n%s", out.String())
	}
}

// Without Landlock (simulated) doctor warns that read-only commands will
// ask a person, and the launcher still runs.
func TestDoctorReportsTheSandboxWithoutLandlock(t *testing.T) {
	var out, errb bytes.Buffer
	_ = run(context.Background(), []string{"doctor", "--data-dir", filepath.Join(t.TempDir(), "none"), "--offline", "--sandbox-no-landlock"}, env(nil), &out, &errb)
	got := doctorLines(out.String())
	if len(got["sandbox"]) != 1 || got["sandbox"][0] != "warn" || !strings.Contains(out.String(), "read-only commands are not auto-allowed") {
		t.Fatalf("sandbox line: %v\n%s", got["sandbox"], out.String())
	}
	if len(got["sandbox_launcher"]) != 1 || got["sandbox_launcher"][0] != launcherWant("sandbox_launcher") {
		t.Fatalf("launcher line: %v\n%s", got["sandbox_launcher"], out.String())
	}
}

// launcherWant is the status doctor gives check on a healthy host: the
// launcher line warns where this host forbids new namespaces.
func launcherWant(check string) string {
	if check == "sandbox_launcher" && !sandbox.PrivateMountNamespace() {
		return "warn"
	}
	return "ok"
}
