package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

func seedOrg(t *testing.T, db *DB, name string, projects ...string) (string, []string) {
	t.Helper()
	var org string
	var ids []string
	err := db.Write(context.Background(), func(tx *Tx) error {
		var err error
		org, ids, err = seedOrgTx(context.Background(), tx, name, projects...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return org, ids
}

// The documents of the knowledge store on a shared database: a write gets a
// new change number, a deletion leaves a tombstone the feed returns, reads
// stay inside their scope.
func TestKnowledgeDocsAndTheirFeed(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	org, ps := seedOrg(t, db, "alpha", "web")
	other, _ := seedOrg(t, db, "beta")
	put := func(org, project, name, content string) *KnowledgeDoc {
		d := &KnowledgeDoc{OrgID: org, ProjectID: project, Collection: "runbooks", Name: name, Content: []byte(content),
			Size: int64(len(content)), SHA256: "h-" + content, Title: name, Tags: []string{"a", "b"}}
		if err := db.PutKnowledgeDoc(ctx, d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	a := put(org, ps[0], "a.md", "one")
	b := put(org, "", "b.md", "two")
	put(other, "", "c.md", "three")
	a2 := put(org, ps[0], "a.md", "one, edited")
	if !(a.Seq < b.Seq && b.Seq < a2.Seq) {
		t.Fatalf("change numbers not increasing: %d %d %d", a.Seq, b.Seq, a2.Seq)
	}
	got, err := db.GetKnowledgeDoc(ctx, org, ps[0], "runbooks", "a.md")
	if err != nil || string(got.Content) != "one, edited" || got.Seq != a2.Seq || len(got.Tags) != 2 {
		t.Fatalf("get = %+v, %v", got, err)
	}
	if _, err := db.GetKnowledgeDoc(ctx, other, ps[0], "runbooks", "a.md"); !IsNotFound(err) {
		t.Fatalf("another org read a document: %v", err)
	}
	if _, err := db.GetKnowledgeDoc(ctx, org, "", "runbooks", "a.md"); !IsNotFound(err) {
		t.Fatalf("the org scope read a project's document: %v", err)
	}
	tomb, err := db.DeleteKnowledgeDoc(ctx, org, "", "runbooks", "b.md")
	if err != nil || !tomb.Deleted || tomb.Seq <= a2.Seq {
		t.Fatalf("delete = %+v, %v", tomb, err)
	}
	if _, err := db.DeleteKnowledgeDoc(ctx, org, "", "runbooks", "b.md"); !IsNotFound(err) {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := db.DeleteKnowledgeDoc(ctx, other, ps[0], "runbooks", "a.md"); !IsNotFound(err) {
		t.Fatalf("another org deleted a document: %v", err)
	}
	if ls, err := db.ListKnowledgeDocs(ctx, org, "", "runbooks"); err != nil || len(ls) != 0 {
		t.Fatalf("list after delete = %v, %v", ls, err)
	}
	feed, err := db.KnowledgeChanges(ctx, 0, 100)
	if err != nil || len(feed) != 3 {
		t.Fatalf("feed = %d rows, %v", len(feed), err)
	}
	last := feed[len(feed)-1]
	if !last.Deleted || last.Name != "b.md" || len(last.Content) != 0 {
		t.Fatalf("last change = %+v, want b.md's tombstone", last)
	}
	if rest, _ := db.KnowledgeChanges(ctx, last.Seq, 100); len(rest) != 0 {
		t.Fatalf("changes after the last = %d", len(rest))
	}
	// Creating over a live document is a conflict that writes nothing; over a tombstone it revives it.
	dup := &KnowledgeDoc{OrgID: org, ProjectID: ps[0], Collection: "runbooks", Name: "a.md", Content: []byte("dup"), CreateOnly: true}
	if err := db.PutKnowledgeDoc(ctx, dup); ErrorCode(err) != EConflict {
		t.Fatalf("create over a live document: %v", err)
	}
	if got, _ := db.GetKnowledgeDoc(ctx, org, ps[0], "runbooks", "a.md"); string(got.Content) != "one, edited" {
		t.Fatalf("the conflict wrote: %q", got.Content)
	}
	revived := &KnowledgeDoc{OrgID: org, Collection: "runbooks", Name: "b.md", Content: []byte("back"), CreateOnly: true}
	if err := db.PutKnowledgeDoc(ctx, revived); err != nil {
		t.Fatalf("create over a tombstone: %v", err)
	}
	// A put replaces.
	put(org, "", "b.md", "back")
	if total, by, err := db.KnowledgeBytes(ctx, org); err != nil || total != int64(len("one, edited")+len("back")) || by[""] != 4 || by[ps[0]] != 11 {
		t.Fatalf("usage = %d %v %v", total, by, err)
	}
	if total, _, _ := db.KnowledgeBytes(ctx, other); total != 5 {
		t.Fatalf("the other org's usage = %d", total)
	}
	if ls, _ := db.ListKnowledgeDocs(ctx, org, "", "runbooks"); len(ls) != 1 || ls[0].Content != nil {
		t.Fatalf("list = %+v", ls)
	}
}

// Several servers writing at once: a follower that polls the feed while they
// write, and only ever reads above the last number it saw, still sees every
// document (writers commit in the order of their numbers).
func TestKnowledgeFeedMissesNothingUnderConcurrentWriters(t *testing.T) {
	t.Parallel()
	db, path := openTemp(t)
	ctx := context.Background()
	org, _ := seedOrg(t, db, "alpha")
	writers := []*DB{db}
	if db.Shared() {
		for range 2 {
			w, err := reopen(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.Close() })
			writers = append(writers, w)
		}
	}
	const each = 40
	var wg sync.WaitGroup
	done := make(chan struct{})
	for i, w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				d := &KnowledgeDoc{OrgID: org, Collection: "facts", Name: fmt.Sprintf("w%d-%d.md", i, j), Content: []byte("x"), Size: 1, SHA256: "x"}
				if err := w.PutKnowledgeDoc(ctx, d); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	seen := map[string]bool{}
	var cursor int64
	for finished := false; ; {
		select {
		case <-done:
			finished = true
		default:
		}
		page, err := db.KnowledgeChanges(ctx, cursor, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range page {
			seen[d.Name] = true
			cursor = d.Seq
		}
		if finished && len(page) == 0 {
			break
		}
	}
	if want := each * len(writers); len(seen) != want {
		t.Fatalf("the follower saw %d documents of %d", len(seen), want)
	}
}
