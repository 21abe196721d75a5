package audit_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/audit"
	"github.com/opsagent/opsagent/store"
)

func openDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "opsagent.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func record(org, action string) *store.AuditRecord {
	return &store.AuditRecord{ID: store.NewID(), OrgID: org, Action: action, Outcome: "success", Detail: "{}",
		CreatedAt: time.Now().UTC()}
}

// Concurrent writers to two orgs end with two unbroken chains holding every
// event, and Flush is a barrier: what was queued before it is readable after.
func TestWriterChainsConcurrentEventsPerOrg(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	w := audit.New(db, nil)
	defer w.Close()
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				w.Enqueue(record([]string{"org-a", "org-b"}[i%2], fmt.Sprintf("test.%d.%d", g, i)))
			}
		}()
	}
	wg.Wait()
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for _, org := range []string{"org-a", "org-b"} {
		n, brk, err := db.VerifyAuditChain(ctx, org)
		if err != nil || brk != nil || n != 200 {
			t.Fatalf("%s: %d events, break %+v, err %v; want 200 and no break", org, n, brk, err)
		}
	}
}

// After Close, Enqueue still stores the event (synchronously) and Flush
// returns at once; Close twice is harmless.
func TestWriterAfterCloseWritesSynchronously(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	w := audit.New(db, nil)
	w.Enqueue(record("org-c", "before.close"))
	w.Close()
	w.Close()
	w.Enqueue(record("org-c", "after.close"))
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	n, brk, err := db.VerifyAuditChain(context.Background(), "org-c")
	if err != nil || brk != nil || n != 2 {
		t.Fatalf("%d events, break %+v, err %v; want 2", n, brk, err)
	}
}

// failing refuses the first calls, then stores into the real database.
type failing struct {
	db    *store.DB
	mu    sync.Mutex
	fails int
	calls int
}

func (f *failing) AppendAudit(ctx context.Context, recs []*store.AuditRecord) error {
	f.mu.Lock()
	f.calls++
	fail := f.calls <= f.fails
	f.mu.Unlock()
	if fail {
		return errors.New("database is locked")
	}
	return f.db.AppendAudit(ctx, recs)
}

// A failed commit is retried: a transient error loses nothing.
func TestWriterRetriesAFailedCommit(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	f := &failing{db: db, fails: 2}
	w := audit.New(f, nil)
	defer w.Close()
	w.Enqueue(record("org-d", "retried"))
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	n, _, err := db.VerifyAuditChain(context.Background(), "org-d")
	if err != nil || n != 1 || f.calls != 3 {
		t.Fatalf("%d events after %d calls (%v); want 1 after 3", n, f.calls, err)
	}
}

// Flush gives up with the caller's context.
func TestWriterFlushHonoursContext(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	f := &failing{db: db, fails: 3} // every attempt fails: the batch takes >= 300ms of back-off
	w := audit.New(f, nil)
	defer w.Close()
	w.Enqueue(record("org-e", "slow"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := w.Flush(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Flush = %v, want the context's deadline", err)
	}
}
