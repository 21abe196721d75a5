package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/store"
	"github.com/opsagent/opsagent/store/storetest"
)

// On several servers sharing PostgreSQL (issue 20): `vault rotate` works on
// the database in three steps (stage, promote and re-encrypt, retire), every
// server reading the values throughout; `backup` refuses and names pg_dump;
// `serve --print-config` counts the accounts in the database.
func TestVaultRotateBackupPrintConfigOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two server processes")
	}
	dbURL := storetest.DatabaseURL(t)
	fake := llmfake.New(t, llmfake.Always(llmfake.Text("done")))
	base := t.TempDir()
	d1, d2 := filepath.Join(base, "n1"), filepath.Join(base, "n2")
	n1 := startNode(t, d1, dbURL, fake)
	for _, sub := range []string{"vault", "keys"} {
		if err := os.CopyFS(filepath.Join(d2, sub), os.DirFS(filepath.Join(d1, sub))); err != nil {
			t.Fatal(err)
		}
	}
	n2 := startNode(t, d2, dbURL, fake)
	c := &caller{t: t}
	reg := c.must(201, "POST", n1.url+"/api/auth/register", map[string]any{"email": "owner@example.com", "password": "correct horse battery", "name": "owner"})
	c.token = reg["access_token"].(string)
	c.project = c.must(201, "POST", n1.url+"/api/projects", map[string]any{"name": "prod"})["id"].(string)
	c.must(200, "PUT", n1.url+"/api/secrets/DB_PASSWORD", map[string]any{"value": "hunter2"})
	task := c.must(201, "POST", n1.url+"/api/tasks", map[string]any{"name": "on alert", "prompt": "look"})["id"].(string)
	// The webhook's bearer secret is a vault ciphertext each server decrypts
	// to check a delivery: a 202 on a server proves it reads the current value.
	secret := c.must(200, "PUT", n1.url+"/api/tasks/"+task+"/webhook", map[string]any{"provider": "generic", "scheme": "bearer", "dedupe_window_seconds": 0})["secret"].(string)
	deliver := func(n *node, when string) {
		t.Helper()
		req, _ := http.NewRequest("POST", n.url+"/api/webhooks/"+task, strings.NewReader(`{"title":"`+when+`"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+secret)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusAccepted {
			t.Fatalf("%s: delivery to %s answered %d", when, n.url, res.StatusCode)
		}
	}
	cli := func(args ...string) (string, error) {
		var out, errb bytes.Buffer
		err := run(context.Background(), args, func(string) string { return "" }, &out, &errb)
		return out.String() + errb.String(), err
	}
	copyKeyring := func() {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(d1, "vault", "keyring"))
		if err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(d2, "vault", "keyring.new")
		if err := os.WriteFile(tmp, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(d2, "vault", "keyring")); err != nil {
			t.Fatal(err)
		}
	}
	counts := func() map[string]int {
		t.Helper()
		db, err := store.OpenPostgres(context.Background(), dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		m, err := db.CountCiphertextsByKey(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	before := counts()
	if len(before) != 1 {
		t.Fatalf("ciphertexts by key before: %v", before)
	}

	// Without --database-url there is no database to re-encrypt: refused
	// (it used to create an empty SQLite file and retire the key in use).
	if out, err := cli("vault", "rotate", "--data-dir", d1); err == nil || !strings.Contains(err.Error(), "--database-url") {
		t.Fatalf("rotate without the database: %v\n%s", err, out)
	}
	// Without a staged key the database is left alone.
	if out, err := cli("vault", "rotate", "--data-dir", d1, "--database-url", dbURL); err == nil || !strings.Contains(err.Error(), "--stage") {
		t.Fatalf("rotate without a staged key: %v\n%s", err, out)
	}
	if out, err := cli("vault", "rotate", "--stage", "--data-dir", d1); err != nil || !strings.Contains(out, "step 1 of 3") {
		t.Fatalf("stage: %v\n%s", err, out)
	}
	copyKeyring()
	out, err := cli("vault", "rotate", "--data-dir", d1, "--database-url", dbURL)
	if err != nil || !strings.Contains(out, "step 2 of 3") {
		t.Fatalf("promote: %v\n%s", err, out)
	}
	after := counts()
	if len(after) != 1 || after[oldKey(before)] != 0 {
		t.Fatalf("after the promotion: %v (before %v)", after, before)
	}
	// Node 2 holds the new key only as staged: it reads the re-encrypted
	// values, and still encrypts to the old key (a straggler for --retire).
	deliver(n2, "node 2 after the promotion")
	deliver(n1, "node 1 after the promotion")
	c.must(200, "PUT", n2.url+"/api/secrets/API_TOKEN", map[string]any{"value": "s3cr3t"})
	if m := counts(); m[oldKey(before)] != 1 {
		t.Fatalf("node 2 wrote with its current key: %v", m)
	}
	copyKeyring()
	out, err = cli("vault", "rotate", "--retire", "--data-dir", d1, "--database-url", dbURL)
	if err != nil || !strings.Contains(out, "step 3 of 3") || !strings.Contains(out, oldKey(before)) {
		t.Fatalf("retire: %v\n%s", err, out)
	}
	copyKeyring()
	final := counts()
	if len(final) != 1 || final[oldKey(before)] != 0 {
		t.Fatalf("after retiring: %v", final)
	}
	if b, _ := os.ReadFile(filepath.Join(d2, "vault", "keyring")); strings.Count(string(b), "AGE-SECRET-KEY-") != 1 {
		t.Fatalf("the copied keyring holds %d keys", strings.Count(string(b), "AGE-SECRET-KEY-"))
	}
	deliver(n1, "node 1 after retiring")
	deliver(n2, "node 2 after retiring")

	// backup refuses and says what to do instead.
	if out, err := cli("backup", "--data-dir", d1, "--database-url", dbURL, "--out", filepath.Join(base, "b.tar.gz")); err == nil || !strings.Contains(err.Error(), "pg_dump") {
		t.Fatalf("backup on PostgreSQL: %v\n%s", err, out)
	}
	// print-config counts the accounts in the database: sign-up is by invitation now.
	out, err = cli("serve", "--print-config", "--data-dir", filepath.Join(base, "empty"), "--database-url", dbURL)
	if err != nil || !strings.Contains(out, "signup=invite\n") || strings.Contains(out, "cannot count") {
		t.Fatalf("print-config: %v\n%s", err, out)
	}
}

// oldKey is the one key id of a ciphertext count.
func oldKey(m map[string]int) string {
	for k := range m {
		return k
	}
	return ""
}
