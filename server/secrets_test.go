package server_test

import (
	"bytes"
	"context"
	"fmt"
	"github.com/opsagent/opsagent/store/storetest"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/server/secrets"
	"github.com/opsagent/opsagent/store"
)

// openEnv starts a server where anyone may register (tests need several tenants).
func openEnv(t *testing.T) *testEnv {
	return newEnv(t, func(c *server.Config) { c.Signup = "open" })
}

// orgOf returns the client's current org id.
func (c *client) orgOf() string {
	c.env.t.Helper()
	return c.must(200, "GET", "/api/auth/me", nil).JSON()["current_org_id"].(string)
}

// newProject creates a project in the client's current org through the store
// (project routes belong to another feature) and returns its id.
func (e *testEnv) newProject(c *client, name string) string {
	e.t.Helper()
	p := &store.Project{OrgID: c.orgOf(), Name: name}
	if err := e.DB.CreateProject(context.Background(), p); err != nil {
		e.t.Fatal(err)
	}
	return p.ID
}

func TestSecretsAreWriteOnlyAndScoped(t *testing.T) {
	t.Parallel()
	env := openEnv(t)
	alice := env.register("alice@example.com")
	p1 := env.newProject(alice, "prod")
	p2 := env.newProject(alice, "staging")
	alice.Project = p1

	r := alice.must(200, "PUT", "/api/secrets/DB_PASSWORD", map[string]any{"value": "p1-db-value", "description": "prod db"})
	if bytes.Contains(r.Body, []byte("p1-db-value")) {
		t.Fatalf("PUT echoed the value: %s", r.Body)
	}
	first := r.JSON()
	if first["scope"] != "project" || first["name"] != "DB_PASSWORD" || first["key_id"] == "" {
		t.Fatalf("got %v", first)
	}
	again := alice.must(200, "PUT", "/api/secrets/DB_PASSWORD", map[string]any{"value": "p1-db-value-2"}).JSON()
	if again["created_at"] != first["created_at"] {
		t.Fatalf("replace changed created_at: %v then %v", first, again)
	}
	alice.Project = ""
	alice.must(200, "PUT", "/api/org-secrets/DB_PASSWORD", map[string]any{"value": "org-db-value"})
	alice.must(200, "PUT", "/api/org-secrets/SLACK_TOKEN", map[string]any{"value": "org-slack-value"})

	alice.Project = p1
	list := alice.must(200, "GET", "/api/secrets", nil)
	for _, v := range []string{"p1-db-value", "org-db-value", "org-slack-value"} {
		if bytes.Contains(list.Body, []byte(v)) {
			t.Fatalf("list leaks a value: %s", list.Body)
		}
	}
	var got struct {
		Items []struct {
			Name, Scope string
			Overridden  bool
		}
		Total int
	}
	list.decode(t, &got)
	if got.Total != 3 {
		t.Fatalf("got %d secrets, want 3 (own + 2 org): %s", got.Total, list.Body)
	}
	for _, it := range got.Items {
		if it.Scope == "org" && it.Name == "DB_PASSWORD" && !it.Overridden {
			t.Fatalf("org DB_PASSWORD should be marked overridden: %s", list.Body)
		}
	}
	meta := alice.must(200, "GET", "/api/secrets/DB_PASSWORD", nil)
	if meta.JSON()["description"] != "" || bytes.Contains(meta.Body, []byte("value")) {
		t.Fatalf("replace without description should clear it and no value may appear: %s", meta.Body)
	}

	// The agent's view: project overrides org; another project sees only the org's.
	keeper := env.Srv.Secrets()
	vals, err := keeper.Resolve(context.Background(), alice.orgOf(), p1)
	if err != nil {
		t.Fatal(err)
	}
	if vals["DB_PASSWORD"] != "p1-db-value-2" || vals["SLACK_TOKEN"] != "org-slack-value" || len(vals) != 2 {
		t.Fatalf("resolve p1: got %v", vals)
	}
	vals, err = keeper.Resolve(context.Background(), alice.orgOf(), p2, "DB_PASSWORD")
	if err != nil {
		t.Fatal(err)
	}
	if vals["DB_PASSWORD"] != "org-db-value" || len(vals) != 1 {
		t.Fatalf("resolve p2: got %v", vals)
	}
	if alice.must(200, "GET", "/api/secrets/DB_PASSWORD", nil).JSON()["last_used_at"] == nil {
		t.Fatal("resolve did not stamp last_used_at")
	}

	// Bad input.
	wantValidation(t, alice.do("PUT", "/api/secrets/PATH", map[string]any{"value": "x"}), "path", "name")
	wantValidation(t, alice.do("PUT", "/api/secrets/1ABC", map[string]any{"value": "x"}), "path", "name")
	wantValidation(t, alice.do("PUT", "/api/secrets/OPSAGENT_X", map[string]any{"value": "x"}), "path", "name")
	wantValidation(t, alice.do("PUT", "/api/secrets/OK_NAME", map[string]any{}), "body", "value")
	wantValidation(t, alice.do("PUT", "/api/secrets/OK_NAME", map[string]any{"value": ""}), "body", "value")
	if r := alice.do("PUT", "/api/secrets/BIG", map[string]any{"value": strings.Repeat("x", 2<<20)}); r.Status != 413 {
		t.Fatalf("oversized secret: got %d", r.Status)
	}

	// Tenancy: another org's user cannot see the project nor the org's secrets.
	bob := env.register("bob@example.com")
	bob.Project = p1
	bob.must(404, "GET", "/api/secrets", nil)
	bob.must(404, "PUT", "/api/secrets/DB_PASSWORD", map[string]any{"value": "stolen"})
	bob.Project = ""
	if n := bob.must(200, "GET", "/api/org-secrets", nil).JSON()["total"]; n != float64(0) {
		t.Fatalf("bob sees %v org secrets", n)
	}
	bob.must(404, "DELETE", "/api/org-secrets/SLACK_TOKEN", nil)

	alice.must(204, "DELETE", "/api/secrets/DB_PASSWORD", nil)
	alice.must(404, "DELETE", "/api/secrets/DB_PASSWORD", nil)
	alice.must(404, "GET", "/api/secrets/DB_PASSWORD", nil)
	vals, _ = keeper.Resolve(context.Background(), alice.orgOf(), p1, "DB_PASSWORD")
	if vals["DB_PASSWORD"] != "org-db-value" {
		t.Fatalf("after deleting the project secret the org one should apply: %v", vals)
	}
}

func TestOrgLLMKey(t *testing.T) {
	t.Parallel()
	env := openEnv(t)
	alice := env.register("alice@example.com")
	org := alice.orgOf()
	path := "/api/organizations/" + org + "/llm-key"
	if alice.must(200, "GET", path, nil).JSON()["configured"] != false {
		t.Fatal("a fresh org has no LLM key")
	}
	if _, err := env.Srv.Secrets().LLMKey(context.Background(), org); !store.IsNotFound(err) {
		t.Fatalf("LLMKey of a fresh org: got %v, want not found", err)
	}
	r := alice.must(200, "PUT", path, map[string]any{"provider": "anthropic", "api_key": "sk-ant-secret-123", "model": "claude-x"})
	if bytes.Contains(r.Body, []byte("sk-ant-secret-123")) || r.JSON()["configured"] != true || r.JSON()["provider"] != "anthropic" {
		t.Fatalf("got %s", r.Body)
	}
	key, err := env.Srv.Secrets().LLMKey(context.Background(), org)
	if err != nil || key.APIKey != "sk-ant-secret-123" || key.Model != "claude-x" || key.Provider != "anthropic" {
		t.Fatalf("LLMKey: got %+v, %v", key, err)
	}
	// The LLM key is not an environment secret the agent could read.
	if alice.must(200, "GET", "/api/org-secrets", nil).JSON()["total"] != float64(0) {
		t.Fatal("the LLM key shows as an org secret")
	}
	wantValidation(t, alice.do("PUT", path, map[string]any{"provider": "cohere", "api_key": "k"}), "body", "provider")
	wantValidation(t, alice.do("PUT", path, map[string]any{"api_key": "k", "base_url": "file:///etc/passwd"}), "body", "base_url")
	wantValidation(t, alice.do("PUT", path, map[string]any{"provider": "openai"}), "body", "api_key")

	// An admin of the org may look but not change; a stranger gets 404.
	bob := env.register("bob@example.com")
	bob.must(404, "GET", path, nil)
	bob.must(404, "DELETE", path, nil)
	carol := env.register("carol@example.com")
	err = env.DB.AddMember(context.Background(), org, carol.must(200, "GET", "/api/auth/me", nil).JSON()["id"].(string), "admin")
	if err != nil {
		t.Fatal(err)
	}
	if carol.must(200, "GET", path, nil).JSON()["configured"] != true {
		t.Fatal("an admin should see that a key is configured")
	}
	carol.must(403, "PUT", path, map[string]any{"api_key": "mine"})
	carol.must(403, "DELETE", path, nil)
	alice.must(404, "GET", "/api/organizations/"+store.NewID()+"/llm-key", nil)

	alice.must(204, "DELETE", path, nil)
	alice.must(204, "DELETE", path, nil)
	if alice.must(200, "GET", path, nil).JSON()["configured"] != false {
		t.Fatal("key still configured after DELETE")
	}
}

// TestCanarySecretsNeverInClear stores canary values through every route that
// takes a secret, rotates the vault, and greps every file of the data
// directory (database, WAL, vault, outbox...) and the server's log: the
// plaintext appears nowhere.
func TestCanarySecretsNeverInClear(t *testing.T) {
	t.Parallel()
	env := openEnv(t)
	alice := env.register("alice@example.com")
	alice.Project = env.newProject(alice, "prod")
	canaries := []string{"CANARY-proj-7f3a9c1e", "CANARY-org-52bd0e44", "CANARY-llm-9e1c7a20"}
	alice.must(200, "PUT", "/api/secrets/API_TOKEN", map[string]any{"value": canaries[0]})
	alice.must(200, "PUT", "/api/org-secrets/API_TOKEN", map[string]any{"value": canaries[1]})
	alice.must(200, "PUT", "/api/organizations/"+alice.orgOf()+"/llm-key", map[string]any{"api_key": canaries[2]})
	if _, err := env.Srv.Secrets().Resolve(context.Background(), alice.orgOf(), alice.Project); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Srv.Secrets().Rotate(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	checkNoCanary(t, env.Dir, env.Logs.Bytes(), canaries)
}

func checkNoCanary(t *testing.T, dir string, logs []byte, canaries []string) {
	t.Helper()
	files := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		for _, c := range canaries {
			if bytes.Contains(b, []byte(c)) {
				t.Errorf("%s holds canary %s in clear", p, c)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 3 {
		t.Fatalf("walked only %d files: the grep proves nothing", files)
	}
	for _, c := range canaries {
		if bytes.Contains(logs, []byte(c)) {
			t.Errorf("the log holds canary %s", c)
		}
	}
}

// TestVaultRotateCommandWhileServing runs `opsagent vault rotate` (its Go
// entry) against the data directory of a running server while a client keeps
// writing secrets: afterwards every secret decrypts, in this server and after
// a restart, and only the new key is left.
func TestVaultRotateCommandWhileServing(t *testing.T) {
	if storetest.Postgres() {
		t.Skip("the one-step rotation addresses the appliance's file; on PostgreSQL: TestVaultRotateBackupPrintConfigOnPostgres")
	}
	// Not parallel: see TestWebhookSecretsSurviveVaultRotation.
	env := openEnv(t)
	alice := env.register("alice@example.com")
	alice.Project = env.newProject(alice, "prod")
	org := alice.orgOf()
	for i := range 30 {
		alice.must(200, "PUT", fmt.Sprintf("/api/secrets/S_%d", i), map[string]any{"value": fmt.Sprintf("v-%d", i)})
	}
	before, _, _ := env.Srv.Secrets().KeyUsage(context.Background())

	w := writeSecrets(alice, "W", 40)
	var out, errb bytes.Buffer
	err := secrets.RotateCommand(context.Background(), []string{"rotate", "--data-dir", env.Dir, "--batch", "7"},
		func(string) string { return "" }, &out, &errb)
	writes, failed := w.stop()
	if err != nil {
		t.Fatalf("rotate: %v; %s", err, errb.String())
	}
	if !strings.Contains(out.String(), "re-encrypted") {
		t.Fatalf("rotate output: %q", out.String())
	}
	if writes == 0 || failed > 0 {
		t.Fatalf("%d writes during the rotation, %d failed", writes, failed)
	}
	// A few more writes after the rotation, then every secret must decrypt.
	alice.must(200, "PUT", "/api/secrets/AFTER", map[string]any{"value": "after"})
	check := func(e *testEnv) {
		t.Helper()
		vals, err := e.Srv.Secrets().Resolve(context.Background(), org, alice.Project)
		if err != nil {
			t.Fatalf("resolve after rotation: %v", err)
		}
		if vals["S_29"] != "v-29" || vals["AFTER"] != "after" {
			t.Fatalf("got %v", vals)
		}
		keys, counts, err := e.Srv.Secrets().KeyUsage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 1 || keys[0] == before[len(before)-1] || len(counts) != 1 || counts[keys[0]] == 0 {
			t.Fatalf("after rotation: keys %v (before %v), usage %v", keys, before, counts)
		}
	}
	check(env)
	env2 := env.Restart()
	check(env2)
}

// secretWriter keeps replacing secrets through the API while a test does
// something else to the server (a backup, a key rotation).
type secretWriter struct {
	halt           chan struct{}
	done           chan struct{}
	writes, failed int
}

// writeSecrets starts writing c's secrets <prefix>_0 .. <prefix>_<n-1> in a
// loop and returns once three writes went through.
func writeSecrets(c *client, prefix string, n int) *secretWriter {
	w := &secretWriter{halt: make(chan struct{}), done: make(chan struct{})}
	started := make(chan struct{})
	go func() {
		defer close(w.done)
		for i := 0; ; i++ {
			select {
			case <-w.halt:
				return
			default:
			}
			if r := c.do("PUT", fmt.Sprintf("/api/secrets/%s_%d", prefix, i%n), map[string]any{"value": fmt.Sprintf("%s-%d", strings.ToLower(prefix), i)}); r.Status != 200 {
				w.failed++
			}
			w.writes++
			if w.writes == 3 {
				close(started)
			}
		}
	}()
	<-started
	return w
}

// stop ends the writer and says how many writes it made and how many failed.
func (w *secretWriter) stop() (writes, failed int) {
	close(w.halt)
	<-w.done
	return w.writes, w.failed
}
