package server_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func docRef(collection, name string) string {
	return "/api/knowledge/documents/by-name?collection=" + collection + "&name=" + url.QueryEscape(name)
}

const restartRunbook = "---\ntags: [k8s, oncall]\n---\n# Restart a pod\n\nIntro.\n\n## When the pod is stuck\n\nUse kubectl rollout restart deployment web to recycle the crashlooping replicas.\n"

// TestKnowledgeDocumentsFollowFiles uploads, edits the file by hand, syncs,
// searches and deletes, and checks the index follows each step.
func TestKnowledgeDocumentsFollowFiles(t *testing.T) {
	appliancesFiles(t)
	t.Parallel()
	env := openEnv(t)
	alice := env.register("alice@example.com")
	alice.Project = env.newProject(alice, "prod")
	org := alice.orgOf()

	r := alice.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": "k8s/restart.md", "content": restartRunbook})
	if got := r.JSON(); got["title"] != "Restart a pod" || len(got["tags"].([]any)) != 2 {
		t.Fatalf("created: %s", r.Body)
	}
	alice.must(409, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": "k8s/restart.md", "content": "x"})

	hits := alice.must(200, "GET", "/api/knowledge/search?q=crashlooping+replicas", nil).JSON()
	items := hits["items"].([]any)
	if len(items) == 0 {
		t.Fatalf("search found nothing: %v", hits)
	}
	top := items[0].(map[string]any)
	if top["name"] != "k8s/restart.md" || top["heading"] != "When the pod is stuck" || !strings.Contains(top["snippet"].(string), "crashlooping") {
		t.Fatalf("top hit: %v", top)
	}
	if n := len(alice.must(200, "GET", "/api/knowledge/search?q=crashlooping&tag=oncall&collection=runbooks,facts", nil).JSON()["items"].([]any)); n != 1 {
		t.Fatalf("tag filter: got %d hits", n)
	}
	if n := len(alice.must(200, "GET", "/api/knowledge/search?q=crashlooping&tag=database", nil).JSON()["items"].([]any)); n != 0 {
		t.Fatalf("unmatched tag: got %d hits", n)
	}

	// Hand edit on disk, then a hand-made file: a sync picks both up.
	file := filepath.Join(env.Dir, "rag", "docs", org, alice.Project, "runbooks", "k8s", "restart.md")
	if err := os.WriteFile(file, []byte("# Restart a pod\n\n## Drain first\n\nCordon the node with kubectl drain before the zanzibar procedure.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(env.Dir, "rag", "docs", org, alice.Project, "facts"), 0o700)
	if err := os.WriteFile(filepath.Join(env.Dir, "rag", "docs", org, alice.Project, "facts", "dns.md"), []byte("# DNS\n\nThe resolver is unbound on port 5353.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	alice.must(204, "POST", "/api/knowledge/sync", nil)
	if top := firstHit(t, alice, "zanzibar"); top["heading"] != "Drain first" {
		t.Fatalf("after a hand edit: %v", top)
	}
	if n := len(alice.must(200, "GET", "/api/knowledge/search?q=crashlooping", nil).JSON()["items"].([]any)); n != 0 {
		t.Fatal("the old text is still found after the edit")
	}
	if top := firstHit(t, alice, "unbound resolver"); top["collection"] != "facts" {
		t.Fatalf("hand-made file: %v", top)
	}
	got := alice.must(200, "GET", docRef("runbooks", "k8s/restart.md"), nil).JSON()
	if !strings.Contains(got["content"].(string), "zanzibar") {
		t.Fatalf("read: %v", got)
	}
	list := alice.must(200, "GET", "/api/knowledge/documents?limit=1", nil).JSON()
	if list["total"] != float64(2) || len(list["items"].([]any)) != 1 {
		t.Fatalf("list: %v", list)
	}

	// Update through the API, then delete; a file deleted by hand also leaves the index.
	alice.must(200, "PUT", docRef("runbooks", "k8s/restart.md"), map[string]any{"content": "# Restart\n\nNow mentions quuxcorp.\n", "tags": []string{"k8s"}})
	if top := firstHit(t, alice, "quuxcorp"); top["name"] != "k8s/restart.md" {
		t.Fatalf("after update: %v", top)
	}
	alice.must(204, "DELETE", docRef("runbooks", "k8s/restart.md"), nil)
	alice.must(404, "GET", docRef("runbooks", "k8s/restart.md"), nil)
	if n := len(alice.must(200, "GET", "/api/knowledge/search?q=quuxcorp", nil).JSON()["items"].([]any)); n != 0 {
		t.Fatal("deleted document still found")
	}
	os.Remove(filepath.Join(env.Dir, "rag", "docs", org, alice.Project, "facts", "dns.md"))
	alice.must(204, "POST", "/api/knowledge/sync", nil)
	if n := len(alice.must(200, "GET", "/api/knowledge/search?q=unbound", nil).JSON()["items"].([]any)); n != 0 {
		t.Fatal("a file deleted by hand is still found")
	}

	// Observability reflects the searches, including the zero-result ones.
	obs := alice.must(200, "GET", "/api/observability/rag?hours=1", nil).JSON()
	search := obs["search"].(map[string]any)
	if search["searches"].(float64) < 8 || search["zero_results"].(float64) < 3 || len(search["zero_result_queries"].([]any)) == 0 {
		t.Fatalf("observability: %v", obs)
	}
	if _, ok := obs["index"].(map[string]any)["size_bytes"]; !ok {
		t.Fatalf("observability index: %v", obs)
	}
	wantValidation(t, alice.do("GET", "/api/observability/rag?hours=0", nil), "query", "hours")
	wantValidation(t, alice.do("GET", "/api/observability/rag?hours=25", nil), "query", "hours")
}

func firstHit(t *testing.T, c *client, q string) map[string]any {
	t.Helper()
	items := c.must(200, "GET", "/api/knowledge/search?q="+url.QueryEscape(q), nil).JSON()["items"].([]any)
	if len(items) == 0 {
		t.Fatalf("search %q found nothing", q)
	}
	return items[0].(map[string]any)
}

// TestKnowledgeBadInput: traversal, unknown collections, non-text and oversized uploads are refused and
// nothing is written outside the project's folder.
func TestKnowledgeBadInput(t *testing.T) {
	t.Parallel()
	env := openEnv(t)
	alice := env.register("alice@example.com")
	alice.Project = env.newProject(alice, "prod")
	post := func(body map[string]any) *resp { return alice.do("POST", "/api/knowledge/documents", body) }
	for _, name := range []string{"../escape.md", "a/../../escape.md", "/etc/escape.md", ".hidden.md", "notes.exe", "a\\b.md"} {
		if r := post(map[string]any{"collection": "runbooks", "name": name, "content": "# x\n"}); r.Status != 422 {
			t.Fatalf("name %q: got %d %s", name, r.Status, r.Body)
		}
	}
	wantValidation(t, post(map[string]any{"collection": "secrets", "name": "a.md", "content": "x"}), "body", "collection")
	wantValidation(t, post(map[string]any{"collection": "memories", "name": "a.md", "content": "x"}), "body", "collection")
	if r := post(map[string]any{"collection": "runbooks", "name": "bin.md", "content": "PK\x03\x04\x00\x00binary"}); r.Status != 422 {
		t.Fatalf("binary content: got %d %s", r.Status, r.Body)
	}
	if r := post(map[string]any{"collection": "runbooks", "name": "big.md", "content": strings.Repeat("word ", 300_000)}); r.Status != 413 {
		t.Fatalf("oversized: got %d", r.Status)
	}
	wantValidation(t, alice.do("GET", "/api/knowledge/documents/by-name?collection=runbooks&name=..%2Fx.md", nil), "query", "name")
	wantValidation(t, alice.do("GET", "/api/knowledge/search?q=x&limit=101", nil), "query", "limit")
	wantValidation(t, alice.do("GET", "/api/knowledge/search?q=x&collection=nope", nil), "query", "collection")

	// Multipart: a text file goes in, a binary one does not.
	mp := func(filename string, content []byte, fields ...string) *resp {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		for i := 0; i+1 < len(fields); i += 2 {
			w.WriteField(fields[i], fields[i+1])
		}
		w.WriteField("collection", "incidents")
		w.WriteField("tags", "db, postmortem")
		fw, _ := w.CreateFormFile("file", filename)
		fw.Write(content)
		w.Close()
		req, _ := http.NewRequest("POST", env.URL+"/api/knowledge/documents", &b)
		req.Header.Set("Content-Type", w.FormDataContentType())
		req.Header.Set("Authorization", "Bearer "+alice.Token)
		req.Header.Set("X-Project-ID", alice.Project)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out bytes.Buffer
		out.ReadFrom(res.Body)
		return &resp{Status: res.StatusCode, Body: out.Bytes()}
	}
	if r := mp("2026-01-outage.md", []byte("# Outage\n\nThe primary ran out of disk.\n")); r.Status != 201 || !strings.Contains(string(r.Body), "postmortem") {
		t.Fatalf("multipart upload: %d %s", r.Status, r.Body)
	}
	if r := mp("logo.png", []byte("\x89PNG\r\n\x1a\n\x00\x00")); r.Status != 422 {
		t.Fatalf("binary multipart: %d %s", r.Status, r.Body)
	}
	if r := mp("up.md", []byte("# x\n"), "name", "../../up.md"); r.Status != 422 {
		t.Fatalf("traversal in a file name: %d %s", r.Status, r.Body)
	}

	// Nothing outside the project's folder.
	var stray []string
	docs := filepath.Join(env.Dir, "rag", "docs")
	filepath.Walk(env.Dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && strings.HasSuffix(p, ".md") && !strings.HasPrefix(p, filepath.Join(docs, alice.orgOf(), alice.Project)+string(filepath.Separator)) {
			stray = append(stray, p)
		}
		return nil
	})
	if len(stray) > 0 {
		t.Fatalf("files written outside the project folder: %v", stray)
	}
}

// TestKnowledgeSearchTenancy: a project never finds another project's or another org's documents; the
// org-wide documents are found by every project of that org only.
func TestKnowledgeSearchTenancy(t *testing.T) {
	t.Parallel()
	env := openEnv(t)
	alice := env.register("alice@example.com")
	bob := env.register("bob@example.com")
	a1, a2 := env.newProject(alice, "a1"), env.newProject(alice, "a2")
	b1 := env.newProject(bob, "b1")
	put := func(c *client, project, scope, name, word string) {
		c.Project = project
		c.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "facts", "name": name, "content": "# Fact\n\nThe codeword is " + word + ".\n", "scope": scope})
	}
	put(alice, a1, "project", "a1.md", "aardvark")
	put(alice, a2, "project", "a2.md", "aardvark")
	put(alice, a1, "org", "shared.md", "aardvark")
	put(bob, b1, "project", "b1.md", "aardvark")
	found := func(c *client, project string) []string {
		c.Project = project
		var names []string
		for _, it := range c.must(200, "GET", "/api/knowledge/search?q=aardvark&limit=100", nil).JSON()["items"].([]any) {
			h := it.(map[string]any)
			names = append(names, h["scope"].(string)+":"+h["name"].(string))
		}
		return names
	}
	if got := strings.Join(found(alice, a1), ","); got != "org:shared.md,project:a1.md" && got != "project:a1.md,org:shared.md" {
		t.Fatalf("a1 finds %s", got)
	}
	if got := strings.Join(found(alice, a2), ","); got != "org:shared.md,project:a2.md" && got != "project:a2.md,org:shared.md" {
		t.Fatalf("a2 finds %s", got)
	}
	if got := strings.Join(found(bob, b1), ","); got != "project:b1.md" {
		t.Fatalf("b1 finds %s", got)
	}
	// Another org's project id reads as a missing project; its document as a missing document.
	bob.Project = a1
	bob.must(404, "GET", "/api/knowledge/search?q=aardvark", nil)
	bob.must(404, "GET", docRef("facts", "a1.md"), nil)
	alice.Project = a2
	alice.must(404, "GET", docRef("facts", "a1.md"), nil)
	alice.must(200, "GET", docRef("facts", "shared.md")+"&scope=org", nil)
	bob.Project = b1
	bob.must(404, "GET", docRef("facts", "shared.md")+"&scope=org", nil)
	if n := bob.must(200, "GET", "/api/observability/rag", nil).JSON()["index"].(map[string]any)["documents"]; n != float64(1) {
		t.Fatalf("bob's observability counts %v documents", n)
	}
}
