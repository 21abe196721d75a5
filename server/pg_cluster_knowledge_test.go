package server_test

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/opsagent/opsagent/store/storetest"
)

// hitNames searches as c and returns the names of the hits.
func hitNames(t *testing.T, c *client, q string) []string {
	t.Helper()
	items := c.must(200, "GET", "/api/knowledge/search?q="+url.QueryEscape(q), nil).JSON()["items"].([]any)
	var names []string
	for _, it := range items {
		names = append(names, it.(map[string]any)["name"].(string))
	}
	return names
}

// eventually polls cond for up to 15 s (a follower applies changes within a
// second; the machine may be busy) and returns how long it took.
func eventually(t *testing.T, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > 15*time.Second {
			t.Fatalf("%s: not within 15 s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start)
}

// addNode starts one more server of nodes' cluster on a fresh data directory:
// its knowledge index starts empty and is rebuilt from the database.
func addNode(t *testing.T, nodes []*testEnv, dir string) *testEnv {
	t.Helper()
	u, _ := envDatabases.Load(nodes[0].Dir)
	if dir == "" {
		dir = t.TempDir()
		copyDir(t, filepath.Join(nodes[0].Dir, "vault"), filepath.Join(dir, "vault"))
		copyDir(t, filepath.Join(nodes[0].Dir, "keys"), filepath.Join(dir, "keys"))
	}
	envDatabases.Store(dir, u)
	return startEnv(t, dir, openSignup)
}

// The knowledge documents live in the database: what one server writes,
// another finds within seconds (its index follows the change feed); a
// deletion on one disappears from the other's results; a server started
// after the writes, or restarted after missing some, rebuilds its index and
// finds them; another organization's documents never appear.
func TestClusterKnowledgeFollowsTheFeed(t *testing.T) {
	nodes := newCluster(t, 2, openSignup)
	alice := nodes[0].register("alice@example.com")
	alice.Project = nodes[0].newProject(alice, "prod")
	bob := nodes[1].register("bob@example.com")
	bob.Project = nodes[1].newProject(bob, "prod")
	alice2 := *alice
	alice2.env = nodes[1]
	bob1 := *bob
	bob1.env = nodes[0]

	// Written on node 1: found there at once, on node 2 within seconds.
	alice.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": "k8s/restart.md", "content": restartRunbook})
	alice.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "facts", "name": "dns.md", "scope": "org",
		"content": "# DNS\n\nThe resolver is unbound on port 5353 (zebrafish).\n"})
	if got := hitNames(t, alice, "crashlooping replicas"); !slices.Contains(got, "k8s/restart.md") {
		t.Fatalf("node 1 does not find what it wrote: %v", got)
	}
	lag := eventually(t, "node 2 finds node 1's runbook", func() bool {
		return slices.Contains(hitNames(t, &alice2, "crashlooping replicas"), "k8s/restart.md")
	})
	t.Logf("indexing lag node 1 -> node 2: %v", lag)
	eventually(t, "node 2 finds node 1's org-wide fact", func() bool { return slices.Contains(hitNames(t, &alice2, "zebrafish"), "dns.md") })
	// Reads and lists come from the database: no lag.
	if got := alice2.must(200, "GET", docRef("runbooks", "k8s/restart.md"), nil).JSON(); got["content"] != restartRunbook {
		t.Fatalf("node 2 reads %v", got)
	}
	if n := alice2.must(200, "GET", "/api/knowledge/documents", nil).JSON()["total"]; n != float64(1) {
		t.Fatalf("node 2 lists %v project documents", n)
	}
	alice2.must(409, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": "k8s/restart.md", "content": "x"})
	// Two servers creating one name at once: one creates, the other answers 409, never a silent overwrite.
	for i := range 5 {
		name := fmt.Sprintf("race-%d.md", i)
		codes := make([]int, 2)
		var wg sync.WaitGroup
		for j, c := range []*client{alice, &alice2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes[j] = c.do("POST", "/api/knowledge/documents", map[string]any{"collection": "facts", "name": name, "content": fmt.Sprintf("# Race\n\nwriter %d\n", j)}).Status
			}()
		}
		wg.Wait()
		slices.Sort(codes)
		if codes[0] != 201 || codes[1] != 409 {
			t.Fatalf("concurrent creates of %s answered %v", name, codes)
		}
	}

	// A memory saved on node 1 is recalled on node 2.
	alice.must(201, "POST", "/api/memories", map[string]any{"key": "db-primary", "text": "The primary database is pg-quokka-1."})
	eventually(t, "node 2 finds node 1's memory", func() bool {
		return len(hitNames(t, &alice2, "quokka")) == 1
	})

	// Another organization, writing on node 2 the same words: never in alice's results, on either node.
	bob.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": "bob.md", "content": "# Bob\n\ncrashlooping replicas zebrafish quokka\n"})
	eventually(t, "node 1 finds bob's runbook for bob", func() bool { return slices.Contains(hitNames(t, &bob1, "zebrafish"), "bob.md") })
	for _, c := range []*client{alice, &alice2} {
		for _, q := range []string{"crashlooping", "zebrafish", "quokka"} {
			if got := hitNames(t, c, q); slices.Contains(got, "bob.md") {
				t.Fatalf("alice's search %q on %s found bob's document: %v", q, c.env.URL, got)
			}
		}
	}
	for _, c := range []*client{bob, &bob1} {
		if got := hitNames(t, c, "zebrafish crashlooping quokka"); len(got) != 1 || got[0] != "bob.md" {
			t.Fatalf("bob's search found %v", got)
		}
		c.must(404, "GET", docRef("runbooks", "k8s/restart.md"), nil)
	}

	// Deleted and replaced on node 2: gone from node 1's results.
	alice2.must(204, "DELETE", docRef("runbooks", "k8s/restart.md"), nil)
	alice2.must(200, "PUT", "/api/knowledge/documents/by-name?collection=facts&scope=org&name=dns.md",
		map[string]any{"content": "# DNS\n\nThe resolver moved to port 53 (narwhal).\n"})
	if got := hitNames(t, &alice2, "crashlooping"); len(got) != 0 {
		t.Fatalf("node 2 still finds what it deleted: %v", got)
	}
	eventually(t, "node 1 drops the deleted runbook and the old fact", func() bool {
		return len(hitNames(t, alice, "crashlooping")) == 0 && len(hitNames(t, alice, "zebrafish")) == 0 &&
			slices.Contains(hitNames(t, alice, "narwhal"), "dns.md")
	})
	alice.must(404, "GET", docRef("runbooks", "k8s/restart.md"), nil)

	// A server started after the writes rebuilds its index from the database.
	n3 := addNode(t, nodes, "")
	alice3 := *alice
	alice3.env = n3
	if got := hitNames(t, &alice3, "narwhal"); !slices.Contains(got, "dns.md") {
		t.Fatalf("a new node does not find the fact: %v", got)
	}
	if got := hitNames(t, &alice3, "quokka"); len(got) != 1 {
		t.Fatalf("a new node finds %v for the memory", got)
	}
	if got := hitNames(t, &alice3, "crashlooping zebrafish"); len(got) != 0 {
		t.Fatalf("a new node finds deleted or replaced text: %v", got)
	}

	// A server down while others write catches up when it starts again.
	nodes[1].close()
	alice.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": "late.md", "content": "# Late\n\nWritten while node 2 was down: ocelot.\n"})
	alice.must(204, "DELETE", "/api/knowledge/documents/by-name?collection=facts&scope=org&name=dns.md", nil)
	n2 := addNode(t, nodes, nodes[1].Dir)
	alice2.env = n2
	if got := hitNames(t, &alice2, "ocelot"); !slices.Contains(got, "late.md") {
		t.Fatalf("the restarted node misses a document written while it was down: %v", got)
	}
	if got := hitNames(t, &alice2, "narwhal"); len(got) != 0 {
		t.Fatalf("the restarted node still finds a document deleted while it was down: %v", got)
	}
}

// appliancesFiles skips a test that edits the knowledge files by hand: on
// PostgreSQL the documents are rows, and DATA_DIR/rag holds only an index.
func appliancesFiles(t *testing.T) {
	t.Helper()
	if storetest.Postgres() {
		t.Skip("the knowledge documents are files only on the appliance (SQLite)")
	}
}
