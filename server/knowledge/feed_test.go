package knowledge_test

import (
	"context"
	"testing"
	"time"

	"github.com/opsagent/opsagent/rag"
)

// A server that had stopped following (suspended longer than the retention)
// while a document was deleted and its tombstone pruned: its next read of
// the feed finds it pruned past its position and rebuilds from the
// documents, so the deleted document goes; then it follows as before.
func TestAFollowerBehindThePrunedFeedRebuilds(t *testing.T) {
	db, scope := openShared(t)
	ctx := context.Background()
	a, b := openIndex(t, db, t.TempDir()), openIndex(t, db, t.TempDir()) // not started: they read the feed on Sync
	if _, err := a.Put(ctx, scope, rag.CollectionFacts, "x.md", []byte("# X\n\nThe bandicoot host.\n"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Put(ctx, scope, rag.CollectionFacts, "y.md", []byte("# Y\n\nThe kiwi host.\n"), nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Sync(ctx); err != nil || found(t, b, scope, "bandicoot") != 1 {
		t.Fatalf("setup: %v", err)
	}
	if err := a.Delete(ctx, scope, rag.CollectionFacts, "x.md"); err != nil {
		t.Fatal(err)
	}
	if n, err := db.PruneKnowledgeFeed(ctx, time.Now().Add(time.Minute)); err != nil || n != 1 {
		t.Fatalf("prune removed %d (%v)", n, err)
	}
	if err := b.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if found(t, b, scope, "bandicoot") != 0 || found(t, b, scope, "kiwi") != 1 {
		t.Fatal("the server behind the pruned feed still shows the deleted document, or lost a live one")
	}
	if _, err := a.Put(ctx, scope, rag.CollectionFacts, "z.md", []byte("# Z\n\nThe tuatara host.\n"), nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Sync(ctx); err != nil || found(t, b, scope, "tuatara") != 1 {
		t.Fatalf("it does not follow after the rebuild (%v)", err)
	}
	// The writer, which applied its own deletion, follows on too; a new store finds only the live ones.
	if err := a.Sync(ctx); err != nil || found(t, a, scope, "bandicoot") != 0 {
		t.Fatalf("the writer: %v", err)
	}
	if c := openIndex(t, db, t.TempDir()); found(t, c, scope, "bandicoot") != 0 || found(t, c, scope, "kiwi tuatara") != 2 {
		t.Fatal("a store opened after the prune")
	}
}
