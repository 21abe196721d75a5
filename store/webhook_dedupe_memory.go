package store

import (
	"hash/maphash"
	"math/bits"
	"sync"
	"time"

	"github.com/google/uuid"
)

// The dedupe window in memory (SQLite only; webhook_dedupe_pg.go says why
// PostgreSQL keeps the index). Writing every deduplicated event's key into
// webhook_events_dedupe_key cost ~12 µs CPU per event: the index is in
// random order, so each event dirtied about one 4 KB page in the WAL and
// again at checkpoint. On SQLite one process owns the file and its one
// writer connection orders every INSERT of webhook_events, so the recent
// events of each task and body hash can be known in memory instead: their
// dedupe_key is NULL, and a group commit neither inserts nor queries the
// index for them.
//
// What memory does not hold is still exact: past the cap (or for windows
// longer than dedupeMemoryMaxWindow) events are written to the index as
// before, and a task's lookups consult the index only while one of its
// indexed events can still be inside the window (dedupeTask.indexedAt).
// After a restart a task's memory is rebuilt from its rows on its first
// dedupe delivery (dedupeBatch.load), so cold start reads nothing.

const (
	// dedupeMemoryCap bounds the entries held: about 45-90 bytes each in
	// the maps (16-byte key, 24-byte event), so ~50-100 MB at the cap; a 60 s
	// window at 10k events/s holds ~700k.
	dedupeMemoryCap = 1 << 20
	// dedupeMemoryMaxWindow: longer windows go to the index. One slow
	// webhook with a day's window would otherwise fill the cap and push
	// the default 60 s windows of busy webhooks out to the index.
	dedupeMemoryMaxWindow = time.Hour
	// dedupeClasses: window classes by power of two seconds, up to 2^17 s
	// (the API allows 86400 s).
	dedupeClasses = 18
)

// dedupeMemKey is a task's index and 96 bits of its body hash: entries
// hold no strings. A hit is checked against the row's body_hash
// (dedupeBatch.verify), so two hashes sharing a key never dedupe each other.
type dedupeMemKey struct{ hi, lo uint64 }

// dedupeMemEvent is what a hit answers: the stored event and its time.
type dedupeMemEvent struct {
	id uuid.UUID
	at int64 // received_at, Unix µs (the stored text's precision)
}

// dedupeGen holds the entries received during one span of its class.
type dedupeGen struct {
	num int64 // received_at / span
	m   map[dedupeMemKey]dedupeMemEvent
}

// dedupeClass holds the entries of windows up to window (a power of two
// seconds) in generations of a quarter of it each: a generation is dropped
// whole once its last entry's window passed, which is how the memory
// shrinks (a Go map never does). An entry is held at most 1.25 times its
// class's window, at most 2.5 times its own.
type dedupeClass struct {
	window, span int64 // µs
	gens         []dedupeGen
}

// dedupeTask is what memory knows of one task's dedupe events.
type dedupeTask struct {
	idx    uint64
	loaded bool // its rows received within window were read since the open
	// window: every dedupe event of the task received this recently is in
	// memory or in the index.
	window time.Duration
	// indexedAt: the newest received_at (µs) of its events in the index;
	// 0 when there are none.
	indexedAt int64
}

// dedupeMemory is the SQLite engine's dedupe window. mu guards it; every
// change happens after its transaction committed (Tx.onCommit).
type dedupeMemory struct {
	mu         sync.Mutex
	limit      int // the cap on entries (tests lower it)
	maxWindow  time.Duration
	n          int // entries held, over every class
	seedA      maphash.Seed
	seedB      maphash.Seed
	tasks      map[string]*dedupeTask
	classes    [dedupeClasses]dedupeClass
	evictCheck int64 // µs: no generation can expire before this
	// clock and idle: expiry also runs without deliveries (expireIdle), so
	// an appliance gone quiet after a storm gives the memory back.
	clock  func() time.Time
	idle   *time.Timer
	closed bool
}

func newDedupeMemory(clock func() time.Time) *dedupeMemory {
	m := &dedupeMemory{clock: clock, limit: dedupeMemoryCap, maxWindow: dedupeMemoryMaxWindow, seedA: maphash.MakeSeed(),
		seedB: maphash.MakeSeed(), tasks: map[string]*dedupeTask{}}
	for c := range m.classes {
		w := int64(time.Second/time.Microsecond) << c
		m.classes[c].window, m.classes[c].span = w, max(w/4, 1)
	}
	return m
}

// dedupeMemory returns the engine's dedupe memory, nil when the engine
// keeps the window in the index only (dedupeInMemory).
func (db *DB) dedupeMemory() *dedupeMemory {
	if !db.dedupeInMemory() {
		return nil
	}
	db.dedupeInit.Do(func() { db.dedupeMem = newDedupeMemory(func() time.Time { return db.Now() }) })
	return db.dedupeMem
}

// task returns the task's record, made on first use. Called under mu.
func (m *dedupeMemory) task(id string) *dedupeTask {
	t := m.tasks[id]
	if t == nil {
		t = &dedupeTask{idx: uint64(len(m.tasks))}
		m.tasks[id] = t
	}
	return t
}

func (m *dedupeMemory) key(t *dedupeTask, bodyHash string) dedupeMemKey {
	return dedupeMemKey{hi: t.idx<<32 | maphash.String(m.seedB, bodyHash)>>32, lo: maphash.String(m.seedA, bodyHash)}
}

// classOf is the class of a window: the smallest power of two seconds
// that is at least as long.
func classOf(window time.Duration) int {
	secs := (window + time.Second - 1) / time.Second
	return min(bits.Len64(uint64(max(secs, 1)-1)), dedupeClasses-1)
}

// find returns the newest entry of k received at or after from (µs).
func (m *dedupeMemory) find(k dedupeMemKey, from int64) (dedupeMemEvent, bool) {
	var best dedupeMemEvent
	found := false
	for c := range m.classes {
		gens := m.classes[c].gens
		for g := len(gens) - 1; g >= 0; g-- {
			if e, ok := gens[g].m[k]; ok && e.at >= from && (!found || e.at > best.at) {
				best, found = e, true
				break // older generations hold older entries
			}
		}
	}
	return best, found
}

// add holds e under k for at least window.
func (m *dedupeMemory) add(k dedupeMemKey, e dedupeMemEvent, window time.Duration) {
	cl := &m.classes[classOf(window)]
	num := e.at / cl.span
	i := len(cl.gens)
	for i > 0 && cl.gens[i-1].num > num {
		i-- // a row read back by a load is older than the newest generation
	}
	if i == 0 || cl.gens[i-1].num != num {
		size := 0
		if len(cl.gens) > 0 {
			size = len(cl.gens[len(cl.gens)-1].m) // the last span's rate: no regrowth
		}
		cl.gens = append(cl.gens, dedupeGen{})
		copy(cl.gens[i+1:], cl.gens[i:])
		cl.gens[i] = dedupeGen{num: num, m: make(map[dedupeMemKey]dedupeMemEvent, size)}
		i++
		m.evictCheck = min(m.evictCheck, (num+1)*cl.span+cl.window)
	}
	gen := cl.gens[i-1].m
	if prev, ok := gen[k]; ok {
		if prev.at <= e.at {
			gen[k] = e
		}
		return
	}
	gen[k] = e
	m.n++
}

// remove drops k's entries that name id (its row is gone).
func (m *dedupeMemory) remove(k dedupeMemKey, id uuid.UUID) {
	for c := range m.classes {
		for _, g := range m.classes[c].gens {
			if e, ok := g.m[k]; ok && e.id == id {
				delete(g.m, k)
				m.n--
			}
		}
	}
}

// expire drops the generations whose every entry's window has passed.
func (m *dedupeMemory) expire(now int64) {
	if now < m.evictCheck {
		return
	}
	next := int64(1<<63 - 1)
	for c := range m.classes {
		cl := &m.classes[c]
		drop := 0
		for drop < len(cl.gens) && (cl.gens[drop].num+1)*cl.span+cl.window <= now {
			m.n -= len(cl.gens[drop].m)
			drop++
		}
		if drop > 0 {
			clear(cl.gens[:drop])
			cl.gens = append(cl.gens[:0], cl.gens[drop:]...)
		}
		if len(cl.gens) > 0 {
			next = min(next, (cl.gens[0].num+1)*cl.span+cl.window)
		}
	}
	m.evictCheck = next
}

// scheduleIdle arms the expiry of the oldest generation for when its
// window passes. Called under mu.
func (m *dedupeMemory) scheduleIdle(now int64) {
	if m.n == 0 || m.closed {
		return
	}
	d := time.Duration(m.evictCheck-now)*time.Microsecond + time.Second
	if m.idle == nil {
		m.idle = time.AfterFunc(d, m.expireIdle)
	} else {
		m.idle.Reset(d)
	}
}

func (m *dedupeMemory) expireIdle() {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock().UnixMicro()
	m.expire(now)
	m.scheduleIdle(now)
}

// close stops the idle expiry (DB.Close).
func (m *dedupeMemory) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	if m.idle != nil {
		m.idle.Stop()
	}
}

// Len reports the entries held (tests and measurements).
func (m *dedupeMemory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}
