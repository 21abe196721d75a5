package rag

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// Puts racing with syncs and searches: every acknowledged document ends up indexed exactly once, and a sync
// that scanned the files before a Put does not take that Put's document out of the index.
func TestPutsSyncsAndSearchesTogether(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{BatchFiles: 3})
	scope := Scope{OrgID: "o", ProjectID: "p"}
	ctx, cancel := context.WithCancel(context.Background())
	var bg sync.WaitGroup
	bg.Go(func() {
		for ctx.Err() == nil {
			if err := s.Sync(ctx); err != nil && ctx.Err() == nil {
				t.Errorf("Sync: %v", err)
			}
		}
	})
	bg.Go(func() {
		for ctx.Err() == nil {
			if _, err := s.Search(ctx, scope, Query{Text: "heartbeat"}); err != nil && ctx.Err() == nil {
				t.Errorf("Search: %v", err)
			}
		}
	})
	var writers sync.WaitGroup
	for w := range 4 {
		writers.Go(func() {
			for i := range 8 {
				name := fmt.Sprintf("w%d/doc%02d.md", w, i)
				if _, err := s.Put(ctx, scope, CollectionMemories, name, []byte("# Note\nheartbeat "+name), nil); err != nil {
					t.Errorf("Put: %v", err)
				}
			}
		})
	}
	writers.Wait()
	cancel()
	bg.Wait()
	mustSync(t, s)
	if st := s.Stats(scope); st.Documents != 32 || st.Chunks != 32 {
		t.Fatalf("got %d documents %d chunks, want 32 and 32", st.Documents, st.Chunks)
	}
	if hits := search(t, s, scope, Query{Text: "heartbeat", Limit: MaxLimit}); len(hits) != 32 {
		t.Fatalf("got %d hits, want 32", len(hits))
	}
}
