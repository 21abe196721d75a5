package server_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/opsagent/opsagent/internal/testsrv"
	"github.com/opsagent/opsagent/rag"
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
	t.Cleanup(func() { kb.Close() }) // after the server stops (cleanups run last first)
	ts := testsrv.Start(t, dir, testsrv.Options{RAG: kb})
	env := &testEnv{t: t, URL: ts.URL, Srv: ts.Srv, DB: ts.DB, Dir: ts.Dir, Cfg: ts.Cfg, Logs: ts.Logs, now: time.Now().UTC(), close: ts.Close}

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
