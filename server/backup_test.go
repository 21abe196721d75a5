package server_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/backup"
)

// TestBackupWhileWritingThenRestore archives a running server while a client
// keeps writing through the API, restores the archive into a fresh directory
// and starts a server there: the same users sign in, and secrets written
// before the backup decrypt.
func TestBackupWhileWritingThenRestore(t *testing.T) {
	applianceOnly(t, "opsagent backup archives the data directory; a cluster is backed up with pg_dump")
	t.Parallel()
	env := openEnv(t)
	alice := env.register("alice@example.com")
	alice.Project = env.newProject(alice, "prod")
	org := alice.orgOf()
	for i := range 20 {
		alice.must(200, "PUT", fmt.Sprintf("/api/secrets/BEFORE_%d", i), map[string]any{"value": fmt.Sprintf("before-%d", i)})
	}
	alice.must(200, "PUT", "/api/organizations/"+org+"/llm-key", map[string]any{"provider": "openai", "api_key": "sk-backup-test"})
	afterBackup := writeDocsBeforeBackup(t, env, alice)

	w := writeSecrets(alice, "DURING", 50) // the backup starts while the writer is busy
	archive := filepath.Join(t.TempDir(), "backup.tar.gz")
	var out, errb bytes.Buffer
	err := backup.BackupCommand(context.Background(), []string{"--data-dir", env.Dir, "--out", archive}, func(string) string { return "" }, "test", &out, &errb)
	writes, failed := w.stop()
	if err != nil {
		t.Fatalf("backup: %v; %s", err, errb.String())
	}
	if writes == 0 || failed > 0 {
		t.Fatalf("%d writes during the backup, %d failed", writes, failed)
	}
	if fi, err := os.Stat(archive); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("archive: %v, mode %v", err, fi.Mode())
	}

	// Refuses a non-empty directory.
	if err := backup.RestoreCommand(context.Background(), []string{"--in", archive, "--data-dir", env.Dir}, nil, &out, &errb); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("restore into a used directory: got %v", err)
	}
	fresh := filepath.Join(t.TempDir(), "restored")
	if err := backup.RestoreCommand(context.Background(), []string{"--in", archive, "--data-dir", fresh}, nil, &out, &errb); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if _, err := os.Stat(filepath.Join(fresh, "rag", "index")); err == nil {
		t.Fatal("the disposable RAG index should not be archived")
	}

	env2 := startEnv(t, fresh)
	c := env2.newClient()
	r := c.must(200, "POST", "/api/auth/login", map[string]any{"email": "alice@example.com", "password": "correct horse battery"})
	c.Token = r.JSON()["access_token"].(string)
	c.Project = alice.Project
	if c.orgOf() != org {
		t.Fatal("restored user lost the org")
	}
	vals, err := env2.Srv.Secrets().Resolve(context.Background(), org, alice.Project)
	if err != nil {
		t.Fatalf("restored secrets do not decrypt: %v", err)
	}
	if vals["BEFORE_19"] != "before-19" {
		t.Fatalf("restored secrets: got %v", vals)
	}
	if key, err := env2.Srv.Secrets().LLMKey(context.Background(), org); err != nil || key.APIKey != "sk-backup-test" {
		t.Fatalf("restored LLM key: %+v, %v", key, err)
	}
	afterBackup(env2, c)
}
