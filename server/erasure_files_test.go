package server_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/store"
)

// withKnowledge gives c a project with a project document, an org-wide one
// and a memory, all three about the okapi.
func withKnowledge(t *testing.T, env *testEnv, c *client, name string) {
	t.Helper()
	c.Project = env.newProject(c, "prod")
	c.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": name + ".md", "content": "# " + name + "\n\nThe okapi cluster restarts nightly.\n"})
	c.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "facts", "name": name + "-org.md", "scope": "org", "content": "# Org\n\nokapi facts\n"})
	c.must(201, "POST", "/api/memories", map[string]any{"key": "okapi", "text": "The okapi runs on port 9."})
}

// An account whose solo organization had knowledge is erased: the org's
// folder (documents and memories), its index entries and its audit archive
// leave the data dir, and another organization's stay. Nothing comes back
// when the server restarts and re-reads its files.
func TestErasureRemovesTheOrgsKnowledgeFiles(t *testing.T) {
	t.Parallel()
	applianceOnly(t, "knowledge files; on PostgreSQL the erasure travels the feed (pg_cluster_knowledge_feed_test.go)")
	env := newEnv(t, openSignup)
	eve, bob := env.register("eve@example.com"), env.register("bob@example.com")
	withKnowledge(t, env, eve, "eve")
	withKnowledge(t, env, bob, "bob")
	org, bobOrg := eve.orgOf(), bob.orgOf()
	folder := filepath.Join(env.Dir, "rag", "docs", org)
	archive := filepath.Join(env.Dir, "audit-archive", org)
	if err := os.MkdirAll(archive, 0o700); err != nil { // what retention would have archived
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(archive, "0000000001-0000000002.jsonl"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	held := func(env *testEnv, org string) rag.Stats { return env.Srv.Knowledge().IndexStats(rag.Scope{OrgID: org}) }
	if st := held(env, org); st.Documents != 3 || !exists(folder) {
		t.Fatalf("before: eve's org holds %+v, folder there %v", st, exists(folder))
	}

	eve.must(202, "DELETE", "/api/auth/me/account", nil)
	if err := env.Srv.RunErasures(t.Context()); err != nil {
		t.Fatal(err)
	}
	check := func(env *testEnv, when string) {
		t.Helper()
		if exists(folder) || exists(archive) {
			t.Fatalf("%s: the erased org's files stay (knowledge %v, audit archive %v)", when, exists(folder), exists(archive))
		}
		if st := held(env, org); st.Documents != 0 || st.Chunks != 0 {
			t.Fatalf("%s: the index holds %+v of the erased org", when, st)
		}
		if st := held(env, bobOrg); st.Documents != 3 || !exists(filepath.Join(env.Dir, "rag", "docs", bobOrg)) {
			t.Fatalf("%s: another org lost documents: %+v", when, st)
		}
		bob := *bob
		bob.env = env
		if got := hitNames(t, &bob, "okapi"); len(got) != 3 {
			t.Fatalf("%s: bob finds %v, want his three", when, got)
		}
		for _, n := range hitNames(t, &bob, "okapi") {
			if n == "eve.md" || n == "eve-org.md" {
				t.Fatalf("%s: bob finds eve's %s", when, n)
			}
		}
	}
	check(env, "after the erasure")
	env2 := env.Restart(openSignup)
	check(env2, "after a restart")
}

// A crash between the erasure's commit and the removal of the files: the org
// row is gone, its files stay. The server removes them (folder, index
// entries, audit archive) at its next start.
func TestErasureSweepsFilesOfDeletedOrgsAtStart(t *testing.T) {
	t.Parallel()
	applianceOnly(t, "knowledge files; on PostgreSQL the erasure travels the feed (pg_cluster_knowledge_feed_test.go)")
	env := newEnv(t, openSignup)
	eve, bob := env.register("eve@example.com"), env.register("bob@example.com")
	withKnowledge(t, env, eve, "eve")
	withKnowledge(t, env, bob, "bob")
	org, bobOrg := eve.orgOf(), bob.orgOf()
	archive := filepath.Join(env.Dir, "audit-archive", org)
	if err := os.MkdirAll(archive, 0o700); err != nil {
		t.Fatal(err)
	}
	// The erasure's transaction alone, behind the server's back: what a crash
	// right after its commit leaves.
	if _, err := env.DB.RequestErasure(t.Context(), eve.userID()); err != nil {
		t.Fatal(err)
	}
	done, err := env.DB.ProcessErasures(t.Context(), 50)
	if err != nil || len(done) != 1 || len(done[0].Orgs) != 1 || done[0].Orgs[0] != org {
		t.Fatalf("erasure: %+v (%v), want eve's org %s", done, err, org)
	}
	folder := filepath.Join(env.Dir, "rag", "docs", org)
	if !exists(folder) {
		t.Fatal("the folder went without the server's removal")
	}

	env2 := env.Restart(openSignup)
	eventually(t, "the restarted server removes the erased org's files", func() bool {
		st := env2.Srv.Knowledge().IndexStats(rag.Scope{OrgID: org})
		return !exists(folder) && !exists(archive) && st.Documents == 0 && st.Chunks == 0
	})
	if st := env2.Srv.Knowledge().IndexStats(rag.Scope{OrgID: bobOrg}); st.Documents != 3 {
		t.Fatalf("another org's documents: %+v", st)
	}
	// The periodic erasure job sweeps too: a folder of an org the database
	// never had (an upload that raced the erasure) goes, a live org's stays.
	orphan := filepath.Join(env2.Dir, "rag", "docs", store.NewID(), "_org", "facts")
	if err := os.MkdirAll(orphan, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(orphan, "x.md"), []byte("# X\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := env2.Srv.RunErasures(t.Context()); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Dir(filepath.Dir(orphan))) {
		t.Fatal("the erasure job left the folder of an org the database does not have")
	}
	if !exists(filepath.Join(env2.Dir, "rag", "docs", bobOrg)) {
		t.Fatal("the sweep removed a live org's folder")
	}
}
