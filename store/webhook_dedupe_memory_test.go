package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
)

// dedupeFixture delivers bodies to webhooks one commit at a time, on a
// clock the test moves.
type dedupeFixture struct {
	t    *testing.T
	db   *DB
	path string
	hook *Webhook
	now  time.Time
}

func newDedupeFixture(t *testing.T) *dedupeFixture {
	db, path := openTemp(t)
	f := &dedupeFixture{t: t, db: db, path: path, hook: benchWebhook(t, db), now: time.Now().UTC()}
	db.Now = func() time.Time { return f.now }
	return f
}

func bodyHash(body string) string {
	h := sha256.Sum256([]byte(body))
	return hex.EncodeToString(h[:])
}

func (f *dedupeFixture) item(taskID, body string, window time.Duration) IngestItem {
	return IngestItem{Event: &WebhookEvent{OrgID: f.hook.OrgID, ProjectID: f.hook.ProjectID, TaskID: taskID,
		Provider: "generic", Type: "x", BodyHash: bodyHash(body), Verification: "bearer", Body: []byte(body),
		BodySize: len(body)}, DedupeWindow: window}
}

// deliver ingests the items in one group commit.
func (f *dedupeFixture) deliver(items ...IngestItem) []IngestResult {
	f.t.Helper()
	res, err := f.db.InsertWebhookEvents(context.Background(), items)
	if err != nil {
		f.t.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil {
			f.t.Fatalf("item %d: %v", i, r.Err)
		}
	}
	return res
}

// one delivers body to the fixture's webhook with a 60 s window.
func (f *dedupeFixture) one(body string) IngestResult {
	f.t.Helper()
	return f.deliver(f.item(f.hook.TaskID, body, time.Minute))[0]
}

func wantDuplicate(t *testing.T, r IngestResult, of string) {
	t.Helper()
	if r.Duplicate != "dedupe" || r.ID != of {
		t.Fatalf("got %+v, want a duplicate of %s", r, of)
	}
}

func wantStored(t *testing.T, r IngestResult) {
	t.Helper()
	if r.Duplicate != "" {
		t.Fatalf("got a duplicate (%s of %s), want a stored event", r.Duplicate, r.ID)
	}
}

// The window: a duplicate inside it, a new event once it passed; on
// SQLite memory holds the event (dedupe_key NULL), on PostgreSQL the index.
func TestDedupeWindowHitAndMiss(t *testing.T) {
	f := newDedupeFixture(t)
	first := f.one("a")
	wantStored(t, first)
	f.now = f.now.Add(59 * time.Second)
	wantDuplicate(t, f.one("a"), first.ID)
	wantStored(t, f.one("b"))
	f.now = f.now.Add(2 * time.Second)
	second := f.one("a")
	wantStored(t, second)
	wantDuplicate(t, f.one("a"), second.ID)

	var keyed int
	if err := f.db.r.QueryRow(`SELECT count(*) FROM webhook_events WHERE dedupe_key IS NOT NULL`).Scan(&keyed); err != nil {
		t.Fatal(err)
	}
	if want := map[Engine]int{EngineSQLite: 0, EnginePostgres: 3}[f.db.Engine()]; keyed != want {
		t.Fatalf("%d events in the dedupe index, want %d on %s", keyed, want, f.db.Engine())
	}
}

// One body to two webhooks is two events.
func TestDedupeTasksApart(t *testing.T) {
	f := newDedupeFixture(t)
	other := benchWebhook2(t, f.db, f.hook)
	a := f.deliver(f.item(f.hook.TaskID, "same", time.Minute), f.item(other, "same", time.Minute))
	wantStored(t, a[0])
	wantStored(t, a[1])
	b := f.deliver(f.item(other, "same", time.Minute))
	wantDuplicate(t, b[0], a[1].ID)
	c := f.deliver(f.item(f.hook.TaskID, "same", time.Minute))
	wantDuplicate(t, c[0], a[0].ID)
}

// After a restart, deliveries inside the window of events stored before
// it are still duplicates, and the window still ends.
func TestDedupeAcrossReopen(t *testing.T) {
	f := newDedupeFixture(t)
	first := f.one("a")
	f.now = f.now.Add(30 * time.Second)
	second := f.one("b")
	f.db.Close()
	db, err := reopen(context.Background(), f.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f.db = db
	db.Now = func() time.Time { return f.now }
	f.now = f.now.Add(20 * time.Second)
	wantDuplicate(t, f.one("a"), first.ID)
	wantDuplicate(t, f.one("b"), second.ID)
	wantStored(t, f.one("c"))
	f.now = f.now.Add(15 * time.Second) // a's window passed, b's not
	wantStored(t, f.one("a"))
	wantDuplicate(t, f.one("b"), second.ID)
}

// A webhook whose window grows dedupes against events stored before,
// which memory held only for the shorter window.
func TestDedupeWindowGrows(t *testing.T) {
	f := newDedupeFixture(t)
	first := f.one("a")
	f.now = f.now.Add(10 * time.Minute)
	wantDuplicate(t, f.deliver(f.item(f.hook.TaskID, "a", time.Hour))[0], first.ID)
	f.now = f.now.Add(51 * time.Minute)
	wantStored(t, f.deliver(f.item(f.hook.TaskID, "a", time.Hour))[0])
}

// A delivery whose earlier copy was deleted (retention, a purge) is a new
// event, not a duplicate of one that no longer exists.
func TestDedupeDeletedEventIsNoOriginal(t *testing.T) {
	f := newDedupeFixture(t)
	first := f.one("a")
	if err := f.db.Write(context.Background(), func(tx *Tx) error {
		_, err := tx.Exec(`DELETE FROM webhook_events WHERE id = ?`, first.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	second := f.one("a")
	wantStored(t, second)
	wantDuplicate(t, f.one("a"), second.ID)
}

// Past the cap events go to the index: every event inside its window is
// found in memory or in the index, and nothing else is a duplicate, also
// after a restart.
func TestDedupeMemoryOverflow(t *testing.T) {
	sqliteOnly(t)
	f := newDedupeFixture(t)
	f.db.dedupeMemory().limit = 3
	var ids []string
	bodies := []string{"a", "b", "c", "d", "e"}
	for _, b := range bodies {
		r := f.one(b)
		wantStored(t, r)
		ids = append(ids, r.ID)
	}
	if n := f.db.dedupeMemory().Len(); n != 3 {
		t.Fatalf("memory holds %d events, want the cap 3", n)
	}
	var keyed int
	if err := f.db.r.QueryRow(`SELECT count(*) FROM webhook_events WHERE dedupe_key IS NOT NULL`).Scan(&keyed); err != nil {
		t.Fatal(err)
	}
	if keyed != 2 {
		t.Fatalf("%d events in the index, want 2", keyed)
	}
	check := func(fresh ...string) {
		t.Helper()
		var items []IngestItem
		for _, b := range append(append([]string(nil), bodies...), fresh...) {
			items = append(items, f.item(f.hook.TaskID, b, time.Minute))
		}
		// One batch: memory and index are consulted together.
		res, err := f.db.InsertWebhookEvents(context.Background(), items)
		if err != nil {
			t.Fatal(err)
		}
		for i := range bodies {
			wantDuplicate(t, res[i], ids[i])
		}
		for i := range fresh {
			r := res[len(bodies)+i]
			wantStored(t, r)
			ids = append(ids, r.ID)
		}
		bodies = append(bodies, fresh...)
	}
	f.now = f.now.Add(30 * time.Second)
	check("f", "g")
	f.db.Close()
	db, err := reopen(context.Background(), f.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f.db = db
	db.Now = func() time.Time { return f.now }
	db.dedupeMemory().limit = 3
	f.now = f.now.Add(time.Second)
	check("h", "i")
	// Past every window: memory expires, and the index no longer answers.
	f.now = f.now.Add(2 * time.Minute)
	for _, b := range bodies {
		wantStored(t, f.one(b))
	}
	if n := db.dedupeMemory().Len(); n > 3 {
		t.Fatalf("memory holds %d events past the cap 3", n)
	}
}

// A batch that fails (here: two events with one id) leaves memory as it
// was, so its events are no originals of later deliveries.
func TestDedupeFailedBatchLeavesNoMemory(t *testing.T) {
	f := newDedupeFixture(t)
	id := uuid.Must(uuid.NewV7()).String()
	a, b := f.item(f.hook.TaskID, "a", time.Minute), f.item(f.hook.TaskID, "b", time.Minute)
	a.Event.ID, b.Event.ID = id, id
	if _, err := f.db.InsertWebhookEvents(context.Background(), []IngestItem{a, b}); err == nil {
		t.Fatal("a batch storing one id twice succeeded")
	}
	if m := f.db.dedupeMemory(); m != nil && m.Len() != 0 {
		t.Fatalf("memory holds %d events of a failed batch", m.Len())
	}
	wantStored(t, f.one("a"))
}

// The memory's generations are dropped once their windows passed.
func TestDedupeMemoryExpires(t *testing.T) {
	m := newDedupeMemory(time.Now)
	tk := m.task("t")
	start := time.Now().UnixMicro()
	for i := 0; i < 1000; i++ {
		at := start + int64(i)*1000 // 1 ms apart
		m.add(m.key(tk, bodyHash(string(rune(i)))), dedupeMemEvent{at: at}, time.Minute)
	}
	m.expire(start + int64(time.Minute/time.Microsecond))
	if m.n != 1000 {
		t.Fatalf("%d entries left inside their window, want 1000", m.n)
	}
	if _, ok := m.find(m.key(tk, bodyHash(string(rune(0)))), start); !ok {
		t.Fatal("an entry inside its window is not found")
	}
	m.expire(start + int64(2*time.Minute/time.Microsecond))
	if m.n != 0 || len(m.classes[classOf(time.Minute)].gens) != 0 {
		t.Fatalf("%d entries left past their window", m.n)
	}
}

// BenchmarkDedupeMemoryHeap: the heap the memory holds at the cap and at
// a steady 10k events/s with the default 60 s window (the RSS it costs).
//
//	go test ./store -run XXX -bench DedupeMemoryHeap -benchtime 1x
func BenchmarkDedupeMemoryHeap(b *testing.B) {
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	for range b.N {
		before := heap()
		m := newDedupeMemory(time.Now)
		tk := m.task("t")
		start := time.Now().UnixMicro()
		peak, peakN := uint64(0), 0
		// 10k/s for 180 s, expiring as commits do (every 10 ms here).
		for i := 0; i < 1_800_000; i++ {
			at := start + int64(i)*100
			m.add(m.key(tk, strconv.Itoa(i)), dedupeMemEvent{id: uuid.New(), at: at}, time.Minute)
			if i%100 == 0 {
				m.expire(at)
			}
			if i%100_000 == 0 {
				if h := heap() - before; h > peak {
					peak, peakN = h, m.n
				}
			}
		}
		b.ReportMetric(float64(peak)/1e6, "peak-MB")
		b.ReportMetric(float64(peakN), "entries-at-peak")
		b.ReportMetric(float64(peak)/float64(peakN), "B/entry")
		runtime.KeepAlive(m)
	}
}

// BenchmarkDedupeRebuild: the first delivery after a restart reads back its
// task's window; here 100,000 events (10k/s for 10 s), reported per row.
//
//	go test ./store -run '^$' -bench DedupeRebuild -benchtime 1x
func BenchmarkDedupeRebuild(b *testing.B) {
	for range b.N {
		b.StopTimer()
		db, path := openTemp(b)
		hook := benchWebhook(b, db)
		f := &dedupeFixture{db: db, hook: hook, now: time.Now().UTC()}
		db.Now = func() time.Time { return f.now }
		const rows = 100_000
		for i := 0; i < rows; i += 500 {
			var items []IngestItem
			for j := i; j < i+500; j++ {
				items = append(items, f.item(hook.TaskID, strconv.Itoa(j), time.Minute))
			}
			if _, err := db.InsertWebhookEvents(context.Background(), items); err != nil {
				b.Fatal(err)
			}
			f.now = f.now.Add(50 * time.Millisecond)
		}
		db.Close()
		db2, err := reopen(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
		db2.Now = func() time.Time { return f.now }
		b.StartTimer()
		start := time.Now()
		res, err := db2.InsertWebhookEvents(context.Background(), []IngestItem{f.item(hook.TaskID, "0", time.Minute)})
		if err != nil || res[0].Duplicate != "dedupe" {
			b.Fatalf("%v %+v", err, res)
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/rows, "us/row-read-back")
		b.StopTimer()
		db2.Close()
	}
}
