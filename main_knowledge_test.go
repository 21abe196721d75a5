package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/internal/testkit"
	"github.com/opsagent/opsagent/store"
)

// startServe runs `opsagent serve` on a loopback port over dir and returns its
// base URL, read from the "listening" log line.
func startServe(t *testing.T, dir string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var logs syncBuffer
	vars := map[string]string{"OPSAGENT_SIGNUP": "open"}
	go func() {
		done <- serve(ctx, []string{"--addr", "127.0.0.1:0", "--data-dir", dir, "--log-level", "info"},
			func(k string) string { return vars[k] }, io.Discard, &logs)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if m := listening.FindStringSubmatch(logs.String()); m != nil {
			return "http://" + m[1]
		}
		select {
		case err := <-done:
			t.Fatalf("serve: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("serve did not start")
	return ""
}

func call(t *testing.T, method, url, token, project string, body any, want int) map[string]any {
	t.Helper()
	return testkit.Call(t, method, url, token, project, body, want)
}

// TestBackupRotateRestoreThroughTheBinary drives the subcommands through run,
// as an operator would, against a server started by serve (main's own wiring
// of the vault, the store and the RAG store).
func TestBackupRotateRestoreThroughTheBinary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	base := startServe(t, dir)
	tok := call(t, "POST", base+"/api/auth/register", "", "", map[string]any{"email": "op@example.com", "password": "correct horse battery"}, 201)["access_token"].(string)
	org := call(t, "GET", base+"/api/auth/me", tok, "", nil, 200)["current_org_id"].(string)
	db, err := store.Open(context.Background(), filepath.Join(dir, "opsagent.db"))
	if err != nil {
		t.Fatal(err)
	}
	p := &store.Project{OrgID: org, Name: "prod"}
	if err := db.CreateProject(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	db.Close()
	call(t, "PUT", base+"/api/secrets/DEPLOY_TOKEN", tok, p.ID, map[string]any{"value": "tok-123"}, 200)
	call(t, "POST", base+"/api/knowledge/documents", tok, p.ID, map[string]any{"collection": "runbooks", "name": "deploy.md", "content": "# Deploy\n\nRun the marmalade pipeline.\n"}, 201)

	var out, errb bytes.Buffer
	getenv := func(string) string { return "" }
	if err := run(context.Background(), []string{"vault", "rotate", "--data-dir", dir}, getenv, &out, &errb); err != nil {
		t.Fatalf("vault rotate: %v %s", err, errb.String())
	}
	// The running server encrypts with the new key and still lists the old secret.
	call(t, "PUT", base+"/api/secrets/AFTER_ROTATE", tok, p.ID, map[string]any{"value": "x"}, 200)
	archive := filepath.Join(t.TempDir(), "b.tar.gz")
	if err := run(context.Background(), []string{"backup", "--data-dir", dir, "--out", archive}, getenv, &out, &errb); err != nil {
		t.Fatalf("backup: %v %s", err, errb.String())
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if err := run(context.Background(), []string{"restore", "--in", archive, "--data-dir", restored}, getenv, &out, &errb); err != nil {
		t.Fatalf("restore: %v %s", err, errb.String())
	}
	if !strings.Contains(out.String(), "restored") {
		t.Fatalf("output: %s", out.String())
	}
	base2 := startServe(t, restored)
	tok2 := call(t, "POST", base2+"/api/auth/login", "", "", map[string]any{"email": "op@example.com", "password": "correct horse battery"}, 200)["access_token"].(string)
	if n := call(t, "GET", base2+"/api/secrets", tok2, p.ID, nil, 200)["total"]; n != float64(2) {
		t.Fatalf("restored secrets: %v", n)
	}
	hits := call(t, "GET", base2+"/api/knowledge/search?q=marmalade", tok2, p.ID, nil, 200)["items"].([]any)
	if len(hits) != 1 {
		t.Fatalf("restored search: %v", hits)
	}
}
