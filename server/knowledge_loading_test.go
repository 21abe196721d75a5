package server_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/store"
)

// The server listens while the knowledge index loads in the background
// (as main starts it): /readyz is 503 naming the index, routes that need the
// index answer 503 index_loading with a Retry-After, everything else
// works; once the index is loaded both recover without a restart.
func TestKnowledgeIndexLoadingAnswers503ThenServes(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Another handle holds the index, so the background load waits for it.
	holder, err := rag.Open(ctx, filepath.Join(dir, "rag"), rag.Options{})
	if err != nil {
		t.Fatal(err)
	}
	kb, err := rag.OpenInBackground(ctx, filepath.Join(dir, "rag"), rag.Options{LoadWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, filepath.Join(dir, "opsagent.db"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := server.Config{Addr: "127.0.0.1:0", DataDir: dir, MaxBodyBytes: 1 << 20, ShutdownTimeout: 5 * time.Second,
		MailFrom: "opsagent <noreply@test>"}
	logs := &bytes.Buffer{}
	srv, err := server.New(cfg, server.Deps{DB: db, RAG: kb, Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: logs}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done; kb.Close(); db.Close() })
	env := &testEnv{t: t, URL: "http://" + ln.Addr().String(), Srv: srv, DB: db, Dir: dir, Cfg: cfg, Logs: logs, now: time.Now().UTC()}

	alice := env.register("alice@example.com")
	alice.Project = env.newProject(alice, "prod")
	body := readyz(t, env, 503)
	if ok, detail := body.check(t, "rag_index"); ok || detail != rag.ErrLoading.Error() {
		t.Fatalf("rag_index check while loading: %v %q", ok, detail)
	}
	r := alice.do("GET", "/api/knowledge/search?q=disk", nil)
	if r.Status != 503 || r.JSON()["code"] != "index_loading" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("search while loading: %d %s", r.Status, r.Body)
	}
	alice.must(200, "GET", "/api/tasks", nil) // the rest of the product works meanwhile

	if err := holder.Close(); err != nil {
		t.Fatal(err)
	}
	readyz(t, env, 200)
	alice.must(200, "GET", "/api/knowledge/search?q=disk", nil)
}
