package knowledge_test

import (
	"context"
	"errors"
	"testing"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/server/knowledge"
	"github.com/opsagent/opsagent/store"
	"github.com/opsagent/opsagent/store/storetest"
)

func openShared(t *testing.T) (*store.DB, rag.Scope) {
	t.Helper()
	db, err := store.OpenPostgres(context.Background(), storetest.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, rag.Scope{OrgID: seed(t, db, 1, 0)[0]}
}

func openIndex(t *testing.T, db *store.DB, dir string) *rag.Store {
	t.Helper()
	o := rag.Options{}
	if db != nil {
		o = knowledge.Options(db, o)
	}
	s, err := rag.Open(context.Background(), dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func found(t *testing.T, s *rag.Store, scope rag.Scope, text string) int {
	t.Helper()
	hits, err := s.Search(context.Background(), scope, rag.Query{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	return len(hits)
}

// Two servers' stores on one database: a write on one reaches the other's
// index at its next read of the feed (Sync reads it at once), and so does a
// deletion; the writer's own index has it at once.
func TestSharedStoresFollowEachOther(t *testing.T) {
	db, scope := openShared(t)
	ctx := context.Background()
	a, b := openIndex(t, db, t.TempDir()), openIndex(t, db, t.TempDir())
	if _, err := a.Put(ctx, scope, rag.CollectionFacts, "x.md", []byte("# X\n\nThe wallaby runs on port 7.\n"), nil); err != nil {
		t.Fatal(err)
	}
	if found(t, a, scope, "wallaby") != 1 || found(t, b, scope, "wallaby") != 0 {
		t.Fatal("the writer must find it at once, the other only after reading the feed")
	}
	// Billing's usage comes from the database: the other server counts the upload before its index has it.
	if total, _ := b.OrgBytes(scope.OrgID); total != int64(len("# X\n\nThe wallaby runs on port 7.\n")) {
		t.Fatalf("the other server's usage: %d", total)
	}
	if err := b.Sync(ctx); err != nil || found(t, b, scope, "wallaby") != 1 {
		t.Fatalf("after Sync the other store does not find it (%v)", err)
	}
	if err := b.Delete(ctx, scope, rag.CollectionFacts, "x.md"); err != nil {
		t.Fatal(err)
	}
	if err := a.Delete(ctx, scope, rag.CollectionFacts, "x.md"); !errors.Is(err, rag.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if err := a.Sync(ctx); err != nil || found(t, a, scope, "wallaby") != 0 {
		t.Fatalf("the deletion did not reach the other store (%v)", err)
	}
}

// A write that joined a transaction which then failed reached the index
// before the commit that never came: Refresh puts the index back in line.
func TestRefreshUndoesAWriteWhoseTransactionFailed(t *testing.T) {
	db, scope := openShared(t)
	ctx := context.Background()
	s := openIndex(t, db, t.TempDir())
	if _, err := s.Put(ctx, scope, rag.CollectionFacts, "y.md", []byte("# Y\n\nThe dingo sleeps.\n"), nil); err != nil {
		t.Fatal(err)
	}
	failed := errors.New("the rest of the transaction failed")
	err := db.Write(ctx, func(tx *store.Tx) error {
		tctx := store.WithTx(ctx, tx)
		if _, err := s.Put(tctx, scope, rag.CollectionFacts, "y.md", []byte("# Y\n\nThe numbat sleeps.\n"), nil); err != nil {
			return err
		}
		if _, err := s.Put(tctx, scope, rag.CollectionFacts, "z.md", []byte("# Z\n\nThe numbat eats.\n"), nil); err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) || found(t, s, scope, "numbat") == 0 {
		t.Fatalf("setup: %v", err)
	}
	for _, n := range []string{"y.md", "z.md"} {
		if err := s.Refresh(ctx, scope, rag.CollectionFacts, n); err != nil {
			t.Fatal(err)
		}
	}
	if found(t, s, scope, "numbat") != 0 || found(t, s, scope, "dingo") != 1 {
		t.Fatal("the index still holds what was never committed")
	}
	// And later changes still apply.
	if _, err := openIndex(t, db, t.TempDir()).Put(ctx, scope, rag.CollectionFacts, "z.md", []byte("# Z\n\nThe quoll eats.\n"), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(ctx); err != nil || found(t, s, scope, "quoll") != 1 {
		t.Fatalf("a later change was not applied (%v)", err)
	}
}

// An index left in the data directory by the appliance (or by another
// database) holds documents the database never had: opening on the
// database drops them.
func TestOpenOnTheDatabaseDropsWhatItNeverHad(t *testing.T) {
	db, scope := openShared(t)
	ctx := context.Background()
	dir := t.TempDir()
	files := openIndex(t, nil, dir)
	if _, err := files.Put(ctx, scope, rag.CollectionFacts, "old.md", []byte("# Old\n\nThe platypus was here.\n"), nil); err != nil {
		t.Fatal(err)
	}
	files.Close()
	if s := openIndex(t, db, dir); found(t, s, scope, "platypus") != 0 {
		t.Fatal("a document the database does not hold is still found")
	}
}
