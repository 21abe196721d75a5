package rag

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const restartRunbook = `# Restart a stuck pod

Use when a pod stays in CrashLoopBackOff.

## Diagnose

Run kubectl describe pod and read the events.

## Fix

### Delete the pod

kubectl delete pod lets the deployment recreate it.

### Roll back

If the new image is broken, roll back the deployment with kubectl rollout undo.
`

func TestPutGetSearch(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	scope := Scope{OrgID: "org1", ProjectID: "proj1"}
	d := mustPut(t, s, scope, CollectionRunbooks, "k8s/restart-pod.md", restartRunbook, []string{"K8s", "oncall", "k8s"})
	if got, want := d.Tags, []string{"k8s", "oncall"}; !slices.Equal(got, want) {
		t.Fatalf("tags: got %v, want %v", got, want)
	}
	if d.Title != "Restart a stuck pod" {
		t.Fatalf("title: got %q", d.Title)
	}
	file := filepath.Join(dir, "docs", "org1", "proj1", "runbooks", "k8s", "restart-pod.md")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("file not at the documented place: %v", err)
	}
	if !strings.HasPrefix(string(raw), "---\ntags: [k8s, oncall]\n---\n# Restart") {
		t.Fatalf("front matter: got %q", raw[:60])
	}

	got, err := s.Get(context.Background(), scope, CollectionRunbooks, "k8s/restart-pod.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Content) != string(raw) || !slices.Equal(got.Tags, d.Tags) || got.SHA256 != d.SHA256 {
		t.Fatalf("Get: got %+v, want the file and tags of Put %+v", got, d)
	}

	hits := search(t, s, scope, Query{Text: "rollout undo broken image"})
	if len(hits) == 0 {
		t.Fatal("no hit")
	}
	h := hits[0]
	if h.Name != "k8s/restart-pod.md" || h.Collection != CollectionRunbooks || h.OrgWide {
		t.Fatalf("hit: got %+v", h)
	}
	if want := []string{"Restart a stuck pod", "Fix", "Roll back"}; !slices.Equal(h.Headings, want) {
		t.Fatalf("heading path: got %q, want %q", h.Headings, want)
	}
	if !strings.Contains(h.Snippet, "rollout undo") || h.Score <= 0 {
		t.Fatalf("snippet %q score %v", h.Snippet, h.Score)
	}

	if hits := search(t, s, scope, Query{Text: "kubectl", Tags: []string{"oncall"}}); len(hits) == 0 {
		t.Fatal("tag filter dropped a tagged document")
	}
	if hits := search(t, s, scope, Query{Text: "kubectl", Tags: []string{"database"}}); len(hits) != 0 {
		t.Fatalf("tag filter: got %v, want none", hitNames(hits))
	}
	if hits := search(t, s, scope, Query{Text: "kubectl", Collections: []string{CollectionFacts}}); len(hits) != 0 {
		t.Fatalf("collection filter: got %v, want none", hitNames(hits))
	}
	if hits := search(t, s, scope, Query{Tags: []string{"oncall"}}); len(hits) == 0 {
		t.Fatal("tags-only search found nothing")
	}

	docs, err := s.List(context.Background(), scope, CollectionRunbooks)
	if err != nil || len(docs) != 1 || docs[0].Name != "k8s/restart-pod.md" {
		t.Fatalf("List: got %+v, %v", docs, err)
	}
}

func TestPutKeepsFrontMatterTagsWhenTagsNil(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{})
	scope := Scope{OrgID: "o", ProjectID: "p"}
	content := "---\ntitle: Disk full\ntags: db, Storage\nowner: sre\n---\nClean /var/log first.\n"
	d := mustPut(t, s, scope, CollectionFacts, "disk.txt", content, nil)
	if !slices.Equal(d.Tags, []string{"db", "storage"}) || d.Title != "Disk full" {
		t.Fatalf("got tags %v title %q", d.Tags, d.Title)
	}
	d = mustPut(t, s, scope, CollectionFacts, "disk.txt", content, []string{"ops"})
	if !slices.Equal(d.Tags, []string{"ops"}) || !strings.Contains(string(d.Content), "owner: sre") {
		t.Fatalf("replacing tags: got %v in %q", d.Tags, d.Content)
	}
	if hits := search(t, s, scope, Query{Text: "clean log", Tags: []string{"ops"}}); len(hits) != 1 {
		t.Fatalf("got %d hits, want 1", len(hits))
	}
}

func TestDelete(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{})
	scope := Scope{OrgID: "o", ProjectID: "p"}
	mustPut(t, s, scope, CollectionIncidents, "2026-11-01-db.md", "# Outage\nPrimary database failover took 20 minutes.", nil)
	if err := s.Delete(context.Background(), scope, CollectionIncidents, "2026-11-01-db.md"); err != nil {
		t.Fatal(err)
	}
	if hits := search(t, s, scope, Query{Text: "failover"}); len(hits) != 0 {
		t.Fatalf("deleted document still found: %v", hitNames(hits))
	}
	err := s.Delete(context.Background(), scope, CollectionIncidents, "2026-11-01-db.md")
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: got %v, want ErrNotFound", err)
	}
	if _, err := s.Get(context.Background(), scope, CollectionIncidents, "2026-11-01-db.md"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get: got %v, want ErrNotFound", err)
	}
	if st := s.Stats(Scope{}); st.Documents != 0 || st.Chunks != 0 {
		t.Fatalf("stats after delete: %+v", st)
	}

	// The file is already gone (removed by hand, no sync yet): Delete still clears the index.
	d := mustPut(t, s, scope, CollectionIncidents, "gone.md", "# Gone\nreplica drift", nil)
	if err := os.Remove(filepath.Join(s.dir, "docs", "o", "p", "incidents", d.Name)); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(context.Background(), scope, CollectionIncidents, "gone.md"); err != nil {
		t.Fatalf("Delete of an indexed document whose file is gone: %v", err)
	}
	if hits := search(t, s, scope, Query{Text: "replica drift"}); len(hits) != 0 {
		t.Fatalf("still found: %v", hitNames(hits))
	}
	if err := s.Delete(context.Background(), Scope{OrgID: "o", ProjectID: "never"}, CollectionIncidents, "x.md"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Delete in a project without folder: got %v, want ErrNotFound", err)
	}
}

func TestHandEditsFollowedBySync(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	scope := Scope{OrgID: "o", ProjectID: "p"}
	mustPut(t, s, scope, CollectionRunbooks, "cert.md", "# Renew certificates\nRun certbot renew on the edge nodes.", nil)
	file := filepath.Join(dir, "docs", "o", "p", "runbooks", "cert.md")

	// Edited by hand: the new text is found, the old one no longer.
	writeByHand(t, file, "---\ntags: [tls]\n---\n# Renew certificates\nUse cert-manager; certbot is gone.\n", time.Now().Add(time.Hour))
	mustSync(t, s)
	if hits := search(t, s, scope, Query{Text: "edge nodes"}); len(hits) != 0 {
		t.Fatalf("old text still found: %v", hitNames(hits))
	}
	if hits := search(t, s, scope, Query{Text: "cert-manager", Tags: []string{"tls"}}); len(hits) != 1 {
		t.Fatalf("edited text: got %d hits, want 1", len(hits))
	}

	// Copied in by hand, in a project the store never saw, and org-wide.
	writeByHand(t, filepath.Join(dir, "docs", "o", "p2", "facts", "dns.md"), "Our DNS provider is Route 53.", time.Now())
	writeByHand(t, filepath.Join(dir, "docs", "o", "_org", "facts", "oncall.txt"), "The on-call rotation changes on Mondays.", time.Now())
	// Not indexable: not text, hidden, wrong extension, outside the layout.
	writeByHand(t, filepath.Join(dir, "docs", "o", "p", "facts", "bin.md"), "Route 53\x00\x01", time.Now())
	writeByHand(t, filepath.Join(dir, "docs", "o", "p", "facts", ".draft.md"), "Route 53 draft", time.Now())
	writeByHand(t, filepath.Join(dir, "docs", "o", "p", "facts", "notes.pdf"), "Route 53 pdf", time.Now())
	writeByHand(t, filepath.Join(dir, "docs", "o", "p", "secrets", "x.md"), "Route 53 secret", time.Now())
	mustSync(t, s)
	if got := hitNames(search(t, s, Scope{OrgID: "o", ProjectID: "p2"}, Query{Text: "Route 53"})); !slices.Equal(got, []string{"facts/dns.md"}) {
		t.Fatalf("copied file: got %v", got)
	}
	if got := hitNames(search(t, s, scope, Query{Text: "on-call rotation"})); !slices.Equal(got, []string{"facts/oncall.txt"}) {
		t.Fatalf("org-wide copied file: got %v", got)
	}
	if got := search(t, s, scope, Query{Text: "Route 53"}); len(got) != 0 {
		t.Fatalf("unindexable files found: %v", hitNames(got))
	}

	// Touched without change: nothing re-indexed, still found.
	if err := os.Chtimes(file, time.Now().Add(2*time.Hour), time.Now().Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	mustSync(t, s)
	if hits := search(t, s, scope, Query{Text: "cert-manager"}); len(hits) != 1 {
		t.Fatalf("after touch: got %d hits", len(hits))
	}

	// Deleted by hand: the index follows.
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	mustSync(t, s)
	if hits := search(t, s, scope, Query{Text: "cert-manager"}); len(hits) != 0 {
		t.Fatalf("file deleted by hand still found: %v", hitNames(hits))
	}
	if docs, _ := s.List(context.Background(), scope, CollectionRunbooks); len(docs) != 0 {
		t.Fatalf("List after hand delete: %+v", docs)
	}
}

func TestStartPicksUpFilesWithoutRestart(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{SyncInterval: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.Start(ctx)
	scope := Scope{OrgID: "o", ProjectID: "p"}
	writeByHand(t, filepath.Join(dir, "docs", "o", "p", "runbooks", "redis.md"), "# Redis\nFlush the replica cache.", time.Now())
	deadline := time.Now().Add(30 * time.Second)
	for len(search(t, s, scope, Query{Text: "replica cache"})) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the sync loop never indexed the file")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Search(ctx, scope, Query{Text: "redis"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("search after Close: got %v, want ErrClosed", err)
	}
}

// Create writes a new document and refuses, writing nothing, a name the scope already has.
func TestCreateRefusesAnExistingName(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{})
	scope := Scope{OrgID: "o1", ProjectID: "p1"}
	ctx := context.Background()
	if _, err := s.Create(ctx, scope, CollectionFacts, "a.md", []byte("# A\n\nfirst\n"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, scope, CollectionFacts, "a.md", []byte("# A\n\nsecond\n"), nil); !errors.Is(err, ErrExists) {
		t.Fatalf("second create: %v", err)
	}
	if d, err := s.Get(ctx, scope, CollectionFacts, "a.md"); err != nil || string(d.Content) != "# A\n\nfirst\n" {
		t.Fatalf("after the refused create: %q %v", d.Content, err)
	}
	if _, err := s.Create(ctx, Scope{OrgID: "o1"}, CollectionFacts, "a.md", []byte("# A\n\norg\n"), nil); err != nil {
		t.Fatalf("the same name in another scope: %v", err)
	}
}
