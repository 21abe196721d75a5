package store

import (
	"hash/maphash"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Open incidents' main correlation keys in memory (SQLite only; PostgreSQL
// keeps them in the index, for the reason webhook_dedupe_pg.go gives). In
// an alert storm of distinct groups every event opens an incident, and its
// main_key (migration 0157) was one entry in random order in the partial
// index incidents_main_key: about one dirty 4 KB leaf per event, in the WAL
// and again at checkpoint, and an index every lookup and prefetch walked.
// On SQLite one process owns the file and one writer connection orders
// every write, so memory can know each open incident's main key instead:
// such a row stores it in main_key_held (migration 0162) with main_key
// NULL, outside the index.
//
// What memory holds is exact, entry by entry, through these rules:
//   - a project is loaded (keyBatch.ensure) before memory answers for it:
//     after it, every held, open incident of the project whose last alert
//     is within keyProject.window has its entry (the slot of its project
//     and key names it);
//   - one slot names one incident: an incident whose slot is taken (by an
//     older incident with the key, or by a hash collision) is written to
//     the index instead (main_key), and a held row found without its entry
//     is moved there (keyBatch.unhold);
//   - an entry may be stale (its incident resolved or deleted): every hit
//     is read back by id, as the join reads it anyway, and checked;
//   - a batch's changes apply after its transaction committed.
// A lookup then takes the newest of memory's live candidate and the SQL
// lookup's answer over the rows memory does not hold (keyFind).

const (
	// keyMemoryCap bounds the entries: 8-byte slots and 24-byte entries,
	// 55-85 bytes each in the map as it grows (measured: 160 MiB of heap
	// for 2^21 entries), so about 160 MB at the cap. Past it
	// new incidents' keys go to the index as before.
	keyMemoryCap = 1 << 21
	// keyMemorySweep is how often entries past their project's window are
	// dropped (a pass over the map).
	keyMemorySweep = 5 * time.Minute
	// keyMemoryMargin: an entry outlives the longest window its project
	// used by at least this much (its time is in whole seconds, and the
	// clock may step back a little).
	keyMemoryMargin = time.Minute
)

// keyEntry is memory's incident for a slot.
type keyEntry struct {
	id   uuid.UUID
	at   uint32 // its last alert as memory knows it, Unix seconds (rounded up)
	proj uint32 // its project's index (keyProject.idx)
}

// keyProject is what memory knows of one project.
type keyProject struct {
	idx uint32
	// window: every held, open incident of the project whose last alert
	// is this recent has its entry; 0 until its rows were loaded.
	window time.Duration
	// keep: the longest correlation window the project's lookups used;
	// its entries are kept that long (and keyMemoryMargin) after their
	// last alert.
	keep time.Duration
}

// keyMemory is the SQLite engine's open main keys. mu guards it; every
// change happens after its transaction committed (Tx.onCommit).
type keyMemory struct {
	mu        sync.Mutex
	limit     int
	seed      maphash.Seed
	projects  map[string]*keyProject
	byIdx     []*keyProject
	m         map[uint64]keyEntry
	nextSweep int64 // Unix seconds
	// clock and idle: the sweep also runs without batches (sweepIdle), so
	// an appliance gone quiet after a storm gives the memory back.
	clock  func() time.Time
	idle   *time.Timer
	closed bool
}

func newKeyMemory(clock func() time.Time) *keyMemory {
	return &keyMemory{limit: keyMemoryCap, seed: maphash.MakeSeed(), projects: map[string]*keyProject{},
		m: map[uint64]keyEntry{}, clock: clock}
}

// keyMemory returns the engine's key memory, nil on PostgreSQL.
func (db *DB) keyMemory() *keyMemory {
	if db.pg {
		return nil
	}
	db.keyMemInit.Do(func() { db.keyMem = newKeyMemory(func() time.Time { return db.Now() }) })
	return db.keyMem
}

// project returns the project's record, made on first use. Called under mu.
func (m *keyMemory) project(id string) *keyProject {
	p := m.projects[id]
	if p == nil {
		p = &keyProject{idx: uint32(len(m.byIdx))}
		m.projects[id] = p
		m.byIdx = append(m.byIdx, p)
	}
	return p
}

// slot is the map key of a project's key: 64 bits of a seeded hash. Two
// keys sharing a slot are told apart by the entry's project and by the
// row's main_key_held (keyFind).
func (m *keyMemory) slot(p *keyProject, key string) uint64 {
	return maphash.String(m.seed, key) ^ (uint64(p.idx)+1)*0x9e3779b97f4a7c15
}

// unixUp is t in whole seconds, rounded up: an entry's time is never
// earlier than its incident's last alert.
func unixUp(t time.Time) uint32 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return uint32(max(s, 0))
}

// sweep drops the entries whose incident's last alert is older than
// their project's keep (and the margin), every keyMemorySweep. A Go map
// does not shrink: one mostly emptied is copied into a new one.
func (m *keyMemory) sweep(now time.Time) {
	if now.Unix() < m.nextSweep {
		return
	}
	m.nextSweep = now.Add(keyMemorySweep).Unix()
	before := len(m.m)
	for s, e := range m.m {
		p := m.byIdx[e.proj]
		if int64(e.at) < now.Add(-p.keep-keyMemoryMargin).Unix() {
			delete(m.m, s)
		}
	}
	for _, p := range m.byIdx {
		// What was dropped was older than keep: memory still answers
		// for windows up to keep (a load reads keep's rows, so window
		// never exceeds keep: this only states it).
		p.window = min(p.window, p.keep)
	}
	if len(m.m) < before/2 {
		m.m = copyKeyMap(m.m)
	}
}

// scheduleIdle arms the next sweep for when no batch runs it. Called
// under mu. The sweep only drops entries past every window their project's
// lookups used, so it may run between a batch's reads and its commit.
func (m *keyMemory) scheduleIdle() {
	if len(m.m) == 0 || m.closed {
		return
	}
	d := keyMemorySweep + time.Second
	if m.idle == nil {
		m.idle = time.AfterFunc(d, m.sweepIdle)
	} else {
		m.idle.Reset(d)
	}
}

func (m *keyMemory) sweepIdle() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(m.clock())
	m.scheduleIdle()
}

// close stops the idle sweep (DB.Close).
func (m *keyMemory) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	if m.idle != nil {
		m.idle.Stop()
	}
}

func copyKeyMap(old map[uint64]keyEntry) map[uint64]keyEntry {
	m := make(map[uint64]keyEntry, len(old))
	for s, e := range old {
		m[s] = e
	}
	return m
}

// Len reports the entries held (tests and measurements).
func (m *keyMemory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m)
}
