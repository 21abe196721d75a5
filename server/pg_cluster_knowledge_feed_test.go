package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/server"
)

// Uploads racing on two servers into one organization at its knowledge
// storage quota (100 bytes on the tiny plan): each write is checked on the
// usage read in its own transaction, so never more than the limit is
// stored, and every refused upload gets the quota's 402 (the per-server
// lock alone let two servers pass it together).
func TestClusterKnowledgeQuotaIsExact(t *testing.T) {
	plans := filepath.Join(t.TempDir(), "plans.json")
	if err := os.WriteFile(plans, []byte(tinyPlans), 0o600); err != nil {
		t.Fatal(err)
	}
	nodes := newCluster(t, 2, func(c *server.Config) {
		c.Signup, c.Billing, c.BillingPlans, c.BillingDefaultPlan = "open", "showback", plans, "tiny"
	})
	alice := nodes[0].register("alice@example.com")
	alice.Project = nodes[0].newProject(alice, "prod")
	alice2 := *alice
	alice2.env = nodes[1]
	const each = 8 // per node; 20 bytes each: five fit
	var mu sync.Mutex
	var stored []string
	var refused []*resp
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, c := range []*client{alice, &alice2} {
		for j := range each {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				name := fmt.Sprintf("n%d-%d.md", i, j)
				r := c.do("POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": name, "content": strings.Repeat("x", 20)})
				mu.Lock()
				defer mu.Unlock()
				switch r.Status {
				case 201:
					stored = append(stored, name)
				case 402:
					refused = append(refused, r)
				default:
					t.Errorf("upload %s: %d %s", name, r.Status, r.Body)
				}
			}()
		}
	}
	close(start)
	wg.Wait()
	if len(stored) != 5 || len(refused) != 2*each-5 {
		t.Fatalf("%d uploads stored (%v), %d refused: want 5 stored, the limit", len(stored), stored, len(refused))
	}
	for _, r := range refused {
		wantQuota(t, r, 402, "knowledge_bytes", 100, 100)
	}
	total, _, err := nodes[0].DB.KnowledgeBytes(t.Context(), alice.orgOf())
	if err != nil || total != 100 {
		t.Fatalf("stored %d bytes (%v), want 100", total, err)
	}
	// A replacement is checked on the difference, on either node.
	alice2.must(200, "PUT", docRef("runbooks", stored[0]), map[string]any{"content": strings.Repeat("y", 20)})
	wantQuota(t, alice.do("PUT", docRef("runbooks", stored[1]), map[string]any{"content": strings.Repeat("y", 21)}), 402, "knowledge_bytes", 100, 100)
}

// Tombstones of deleted documents are pruned from the feed; a server started
// afterwards rebuilds from the documents and does not show the deleted one,
// and a running server that had applied the deletion goes on following
// without rebuilding.
func TestClusterKnowledgeTombstonesArePruned(t *testing.T) {
	nodes := newCluster(t, 2, openSignup)
	alice := nodes[0].register("alice@example.com")
	alice.Project = nodes[0].newProject(alice, "prod")
	alice2 := *alice
	alice2.env = nodes[1]
	alice.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "facts", "name": "gone.md", "content": "# Gone\n\nThe capybara host was retired.\n"})
	alice.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "facts", "name": "kept.md", "content": "# Kept\n\nThe axolotl host serves DNS.\n"})
	eventually(t, "node 2 finds both", func() bool {
		return len(hitNames(t, &alice2, "capybara")) == 1 && len(hitNames(t, &alice2, "axolotl")) == 1
	})
	alice.must(204, "DELETE", docRef("facts", "gone.md"), nil)
	eventually(t, "node 2 drops the deleted one", func() bool { return len(hitNames(t, &alice2, "capybara")) == 0 })

	// Retention past: the tombstone goes.
	if n, err := nodes[0].Srv.RunKnowledgePrune(t.Context(), time.Now().Add(time.Minute)); err != nil || n != 1 {
		t.Fatalf("prune removed %d (%v), want the one tombstone", n, err)
	}
	var tombs int
	if err := nodes[0].DB.Reader().QueryRow(`SELECT COUNT(*) FROM knowledge_documents WHERE deleted = 1`).Scan(&tombs); err != nil || tombs != 0 {
		t.Fatalf("%d tombstones left (%v)", tombs, err)
	}

	n3 := addNode(t, nodes, "")
	alice3 := *alice
	alice3.env = n3
	if got := hitNames(t, &alice3, "capybara"); len(got) != 0 {
		t.Fatalf("a server started after the prune shows the deleted document: %v", got)
	}
	if got := hitNames(t, &alice3, "axolotl"); !slices.Contains(got, "kept.md") {
		t.Fatalf("a server started after the prune misses a live document: %v", got)
	}

	// The running server keeps following: a new write reaches it, the deleted one stays gone.
	alice.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "facts", "name": "after.md", "content": "# After\n\nThe pangolin host took over.\n"})
	for _, c := range []*client{&alice2, &alice3} {
		eventually(t, "a running node finds a write made after the prune", func() bool { return len(hitNames(t, c, "pangolin")) == 1 })
		if got := hitNames(t, c, "capybara"); len(got) != 0 {
			t.Fatalf("%s shows the deleted document again: %v", c.env.URL, got)
		}
	}
	if strings.Contains(nodes[1].Logs.String(), "pruned past this server's position") {
		t.Fatal("a server that had applied the tombstone rebuilt its index")
	}
}

// An organization erased on one server: every server's index drops its
// chunks within seconds (the erasure travels the feed; its rows went by
// cascade, without tombstones), and another organization's stay.
func TestClusterErasedOrgLeavesEveryIndex(t *testing.T) {
	nodes := newCluster(t, 2, openSignup)
	eve := nodes[0].register("eve@example.com")
	eve.Project = nodes[0].newProject(eve, "prod")
	eve2 := *eve
	eve2.env = nodes[1]
	bob := nodes[1].register("bob@example.com")
	bob.Project = nodes[1].newProject(bob, "prod")
	org, bobOrg := eve.orgOf(), bob.orgOf()
	eve.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": "eve.md", "content": "# Eve\n\nThe okapi cluster restarts nightly.\n"})
	eve.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "facts", "name": "org.md", "scope": "org", "content": "# Org\n\nokapi facts\n"})
	eve.must(201, "POST", "/api/memories", map[string]any{"key": "okapi", "text": "The okapi runs on port 9."})
	bob.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": "bob.md", "content": "# Bob\n\nThe okapi of bob.\n"})
	held := func(n *testEnv, org string) rag.Stats { return n.Srv.Knowledge().IndexStats(rag.Scope{OrgID: org}) }
	eventually(t, "both nodes hold eve's three documents and bob's", func() bool {
		return held(nodes[0], org).Documents == 3 && held(nodes[1], org).Documents == 3 && held(nodes[0], bobOrg).Documents == 1
	})
	if got := hitNames(t, &eve2, "okapi"); len(got) != 3 {
		t.Fatalf("eve finds %v on node 2", got)
	}

	eve.must(202, "DELETE", "/api/auth/me/account", nil)
	if err := nodes[0].Srv.RunErasures(t.Context()); err != nil {
		t.Fatal(err)
	}
	for i, n := range nodes {
		eventually(t, fmt.Sprintf("node %d drops the erased org's chunks", i+1), func() bool {
			st := held(n, org)
			return st.Documents == 0 && st.Chunks == 0
		})
		if st := held(n, bobOrg); st.Documents != 1 {
			t.Fatalf("node %d lost another org's document: %+v", i+1, st)
		}
	}
	bob1 := *bob
	bob1.env = nodes[0]
	for _, c := range []*client{bob, &bob1} {
		if got := hitNames(t, c, "okapi"); len(got) != 1 || got[0] != "bob.md" {
			t.Fatalf("bob finds %v", got)
		}
	}
	// A server started now holds nothing of it either, and the erasure can be pruned.
	n3 := addNode(t, nodes, "")
	if st := held(n3, org); st.Documents != 0 {
		t.Fatalf("a new node holds %+v of the erased org", st)
	}
	if n, err := nodes[1].Srv.RunKnowledgePrune(t.Context(), time.Now().Add(time.Minute)); err != nil || n != 1 {
		t.Fatalf("prune removed %d (%v), want the erasure", n, err)
	}
}

// Memories take the same path as documents: saved, edited and deleted on
// one server, found, changed and gone on the other.
func TestClusterMemoriesFollowTheFeed(t *testing.T) {
	nodes := newCluster(t, 2, openSignup)
	alice := nodes[0].register("alice@example.com")
	alice.Project = nodes[0].newProject(alice, "prod")
	alice2 := *alice
	alice2.env = nodes[1]
	id := alice.must(201, "POST", "/api/memories", map[string]any{"key": "db-primary", "text": "The primary database is pg-quokka-1."}).JSON()["id"].(string)
	eventually(t, "node 2 finds node 1's memory", func() bool { return len(hitNames(t, &alice2, "quokka")) == 1 })
	alice2.must(200, "PATCH", "/api/memories/"+id, map[string]any{"text": "The primary database is pg-wombat-2."})
	eventually(t, "node 1 finds the edit and not the old text", func() bool {
		return len(hitNames(t, alice, "wombat")) == 1 && len(hitNames(t, alice, "quokka")) == 0
	})
	alice2.must(204, "DELETE", "/api/memories/"+id, nil)
	eventually(t, "node 1 drops the deleted memory", func() bool { return len(hitNames(t, alice, "wombat")) == 0 })
	alice.must(404, "GET", "/api/memories/"+id, nil)
}
