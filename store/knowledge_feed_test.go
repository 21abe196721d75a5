package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// An erased organization leaves an erasure in the feed (its rows go by
// cascade, without tombstones); tombstones and erasures older than the
// cutoff are pruned, the feed tells a reader below it how far, and change
// numbers are never taken twice afterwards.
func TestKnowledgeFeedErasuresAndPruning(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	alpha, _ := seedOrg(t, db, "alpha", "web")
	beta, _ := seedOrg(t, db, "beta")
	put := func(org, name string) *KnowledgeDoc {
		d := &KnowledgeDoc{OrgID: org, Collection: "facts", Name: name, Content: []byte(name), Size: int64(len(name)), SHA256: name}
		if err := db.PutKnowledgeDoc(ctx, d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	put(alpha, "a.md")
	put(beta, "c.md")
	put(beta, "d.md")
	if _, err := db.DeleteKnowledgeDoc(ctx, beta, "", "facts", "d.md"); err != nil {
		t.Fatal(err)
	}
	var owner string
	if err := db.Reader().QueryRow(`SELECT user_id FROM org_members WHERE org_id = ?`, alpha).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RequestErasure(ctx, owner); err != nil {
		t.Fatal(err)
	}
	if done, err := db.ProcessErasures(ctx, 10); err != nil || len(done) != 1 {
		t.Fatalf("erasure: %v %v", done, err)
	}
	feed, err := db.KnowledgeChanges(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, d := range feed {
		if i > 0 && d.Seq <= feed[i-1].Seq {
			t.Fatalf("feed out of order: %+v", feed)
		}
		switch {
		case d.Erased:
			names = append(names, "erased:"+d.OrgID)
		case d.Deleted:
			names = append(names, "deleted:"+d.Name)
		default:
			names = append(names, d.Name)
		}
	}
	if want := fmt.Sprint([]string{"c.md", "deleted:d.md", "erased:" + alpha}); fmt.Sprint(names) != want {
		t.Fatalf("feed = %v, want %s", names, want)
	}
	last := feed[len(feed)-1].Seq

	// A cutoff before they were written prunes nothing.
	if n, err := db.PruneKnowledgeFeed(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("early prune removed %d (%v)", n, err)
	}
	if feed, _ := db.KnowledgeChanges(ctx, 0, 100); len(feed) != 3 {
		t.Fatalf("after an early prune the feed is %+v", feed)
	}
	if n, err := db.PruneKnowledgeFeed(ctx, time.Now().Add(time.Hour)); err != nil || n != 2 {
		t.Fatalf("prune removed %d (%v), want the tombstone and the erasure", n, err)
	}
	// A reader from before the prune is told how far it went; one from there on reads nothing more.
	feed, _ = db.KnowledgeChanges(ctx, 0, 100)
	if len(feed) != 2 || feed[0].Name != "c.md" || !feed[1].Pruned || feed[1].Seq != last {
		t.Fatalf("after pruning the feed is %+v, want c.md and the pruned mark at %d", feed, last)
	}
	if feed, _ = db.KnowledgeChanges(ctx, last, 100); len(feed) != 0 {
		t.Fatalf("read from the pruned position: %+v", feed)
	}
	if e := put(beta, "e.md"); e.Seq <= last {
		t.Fatalf("a change number was taken again: %d after %d was pruned", e.Seq, last)
	}
}

// Writers on several servers (PostgreSQL handles of one database) racing to
// upload into one organization at its storage quota: the usage read in each
// write's transaction is exact, so never more than the limit is stored, and
// every refused write gets the quota's error.
func TestKnowledgeQuotaIsExactAcrossWriters(t *testing.T) {
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
	const limit, size = 100, 10
	quota := WithKnowledgeQuota(ctx, func(ctx context.Context, tx *Tx, used, replaced, add int64) error {
		if used-replaced+add > limit {
			return &QuotaError{Quota: QuotaKnowledgeBytes, Limit: limit, Current: float64(used)}
		}
		return nil
	})
	var mu sync.Mutex
	stored, refused := 0, 0
	var wg sync.WaitGroup
	for i, w := range writers {
		for j := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range 6 {
					d := &KnowledgeDoc{OrgID: org, Collection: "facts", Name: fmt.Sprintf("w%d-%d-%d.md", i, j, k),
						Content: make([]byte, size), Size: size, SHA256: "x", CreateOnly: true}
					err := w.PutKnowledgeDoc(quota, d)
					var qe *QuotaError
					mu.Lock()
					switch {
					case err == nil:
						stored++
					case errors.As(err, &qe) && qe.Current == limit:
						refused++
					default:
						t.Errorf("write %s: %v", d.Name, err)
					}
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	total, _, err := db.KnowledgeBytes(ctx, org)
	if err != nil {
		t.Fatal(err)
	}
	if total != limit || stored != limit/size || refused != len(writers)*3*6-stored {
		t.Fatalf("stored %d bytes (%d writes), refused %d: want exactly the limit %d", total, stored, refused, limit)
	}
	// A replacement counts the difference: same size passes at the limit, one byte more does not.
	d := &KnowledgeDoc{OrgID: org, Collection: "facts", Name: "w0-0-0.md", Content: make([]byte, size), Size: size, SHA256: "y"}
	if err := db.PutKnowledgeDoc(quota, d); err != nil {
		t.Fatalf("replacing at the limit: %v", err)
	}
	d = &KnowledgeDoc{OrgID: org, Collection: "facts", Name: "w0-0-0.md", Content: make([]byte, size+1), Size: size + 1, SHA256: "z"}
	if err := db.PutKnowledgeDoc(quota, d); !IsQuotaError(err) {
		t.Fatalf("growing past the limit: %v", err)
	}
}
