package server_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/server/knowledge"
	"github.com/opsagent/opsagent/store"
)

func TestMemoriesSaveUpdateSearchDelete(t *testing.T) {
	t.Parallel()
	env := openEnv(t)
	alice := env.register("alice@example.com")
	p1, p2 := env.newProject(alice, "prod"), env.newProject(alice, "staging")
	org := alice.orgOf()
	alice.Project = p1

	first := alice.must(201, "POST", "/api/memories", map[string]any{"key": "db-primary", "title": "Primary database", "text": "The primary database is eastbox behind pgbouncer.", "tags": []string{"db"}}).JSON()
	again := alice.must(200, "POST", "/api/memories", map[string]any{"key": "db-primary", "title": "Primary database", "text": "The primary database is westbox since the failover, behind pgbouncer.", "tags": []string{"db"}}).JSON()
	if again["id"] != first["id"] || again["created_at"] != first["created_at"] {
		t.Fatalf("same key should update: %v then %v", first, again)
	}
	alice.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": "failover.md", "content": "# Failover\n\nPromote the replica westbox with patronictl.\n"})

	// One search finds the runbook and the memory together.
	res := alice.must(200, "GET", "/api/knowledge/search?q=westbox", nil).JSON()["items"].([]any)
	cols := map[string]bool{}
	for _, it := range res {
		cols[it.(map[string]any)["collection"].(string)] = true
	}
	if !cols["memories"] || !cols["runbooks"] {
		t.Fatalf("search should find the memory and the runbook: %v", res)
	}
	if n := len(alice.must(200, "GET", "/api/knowledge/search?q=eastbox", nil).JSON()["items"].([]any)); n != 0 {
		t.Fatal("the memory's old text is still indexed")
	}

	// The agent's Go API: remember from a session, recall by key and by text.
	kb := env.Srv.Knowledge()
	ctx := context.Background()
	sess := store.NewID()
	m, created, err := kb.Remember(ctx, knowledge.RememberInput{OrgID: org, ProjectID: p1, Scope: "org", Key: "oncall-channel",
		Text: "Page the SRE rotation in #ops-oncall.", SessionID: sess})
	if err != nil || !created {
		t.Fatalf("remember: %v %v", created, err)
	}
	if got, err := kb.RecallKey(ctx, org, p2, "oncall-channel"); err != nil || got.ID != m.ID || got.SourceSessionID != sess {
		t.Fatalf("an org memory should be recalled from another project: %+v %v", got, err)
	}
	if _, err := kb.RecallKey(ctx, org, p2, "db-primary"); !store.IsNotFound(err) {
		t.Fatalf("a project memory leaked to a sibling project: %v", err)
	}
	recalled, err := kb.Recall(ctx, org, p1, "which database is primary", 5)
	if err != nil || len(recalled) == 0 || recalled[0].Key != "db-primary" {
		t.Fatalf("recall: %+v %v", recalled, err)
	}
	hits, err := kb.Search(ctx, org, p2, rag.Query{Text: "ops-oncall"})
	if err != nil || len(hits) != 1 || !hits[0].OrgWide {
		t.Fatalf("search_knowledge from p2: %+v %v", hits, err)
	}

	list := alice.must(200, "GET", "/api/memories", nil).JSON()
	if list["total"] != float64(2) {
		t.Fatalf("list: %v", list)
	}
	if alice.must(200, "GET", "/api/memories?scope=org", nil).JSON()["total"] != float64(1) {
		t.Fatal("scope filter")
	}
	if alice.must(200, "GET", "/api/memories?q=pgbouncer", nil).JSON()["total"] != float64(1) {
		t.Fatal("text filter")
	}

	// Edit, then delete: the index follows.
	id := first["id"].(string)
	alice.must(200, "PATCH", "/api/memories/"+id, map[string]any{"text": "The primary database is northbox."})
	if top := firstHit(t, alice, "northbox"); top["collection"] != "memories" {
		t.Fatalf("after edit: %v", top)
	}
	alice.must(204, "DELETE", "/api/memories/"+id, nil)
	alice.must(404, "GET", "/api/memories/"+id, nil)
	if n := len(alice.must(200, "GET", "/api/knowledge/search?q=northbox", nil).JSON()["items"].([]any)); n != 0 {
		t.Fatal("a deleted memory is still found")
	}

	// Bad input saves nothing.
	wantValidation(t, alice.do("POST", "/api/memories", map[string]any{"key": "../etc", "text": "x"}), "body", "key")
	wantValidation(t, alice.do("POST", "/api/memories", map[string]any{"key": "k", "text": ""}), "body", "text")
	wantValidation(t, alice.do("POST", "/api/memories", map[string]any{"key": "k", "text": "x", "scope": "global"}), "body", "scope")
	wantValidation(t, alice.do("POST", "/api/memories", map[string]any{"key": "k", "text": "x", "tags": []string{"Bad Tag!"}}), "body", "tags")
	if alice.must(200, "GET", "/api/memories", nil).JSON()["total"] != float64(1) {
		t.Fatal("a refused memory was saved")
	}
	alice.must(404, "GET", "/api/memories/not-a-uuid", nil)

	// Tenancy: another org cannot read, edit or delete.
	bob := env.register("bob@example.com")
	bob.Project = env.newProject(bob, "b")
	bob.must(404, "GET", "/api/memories/"+m.ID, nil)
	bob.must(404, "PATCH", "/api/memories/"+m.ID, map[string]any{"text": "owned"})
	bob.must(404, "DELETE", "/api/memories/"+m.ID, nil)
	if bob.must(200, "GET", "/api/memories", nil).JSON()["total"] != float64(0) {
		t.Fatal("bob sees alice's memories")
	}
}

// TestMemoryReconcileRepairsTheIndex: a memory whose file vanished is
// re-indexed from its row, a memory file without a row is removed.
func TestMemoryReconcileRepairsTheIndex(t *testing.T) {
	appliancesFiles(t)
	t.Parallel()
	env := openEnv(t)
	alice := env.register("alice@example.com")
	alice.Project = env.newProject(alice, "prod")
	org := alice.orgOf()
	m := alice.must(201, "POST", "/api/memories", map[string]any{"key": "cache", "text": "The cache is memcached on wombat hosts."}).JSON()
	dir := filepath.Join(env.Dir, "rag", "docs", org, alice.Project, "memories")
	if err := os.Remove(filepath.Join(dir, m["id"].(string)+".md")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, store.NewID()+".md"), []byte("# Ghost\n\nA numbat memory nobody saved.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	alice.must(204, "POST", "/api/knowledge/sync", nil)
	fixed, removed, err := env.Srv.Knowledge().Reconcile(context.Background())
	// The server's own pass at start ran before the damage; this one repairs it.
	if err != nil || fixed != 1 || removed != 1 {
		t.Fatalf("reconcile: fixed %d removed %d err %v", fixed, removed, err)
	}
	if top := firstHit(t, alice, "wombat"); top["collection"] != "memories" {
		t.Fatalf("re-indexed memory: %v", top)
	}
	if n := len(alice.must(200, "GET", "/api/knowledge/search?q=numbat", nil).JSON()["items"].([]any)); n != 0 {
		t.Fatal("an orphan memory file is still found")
	}
	if fixed, removed, _ := env.Srv.Knowledge().Reconcile(context.Background()); fixed+removed != 0 {
		t.Fatalf("a second pass should find nothing: %d %d", fixed, removed)
	}
}
