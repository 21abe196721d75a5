package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/google/uuid"
)

// ingestDedupe answers a group commit's dedupe lookups: from the index
// (prefetchDedupe's rows) and, on SQLite, from the memory (dedupeBatch).
type ingestDedupe struct {
	stored map[[2]string]storedEvent
	mem    *dedupeBatch // nil: the index holds every window (PostgreSQL)
	since  map[time.Duration]windowStart
}

// windowStart is the start of a window as stored text and in µs.
type windowStart struct {
	ts string
	us int64
}

const (
	// queryDedupeRows reads a task's events that can be inside its window
	// (the rebuild after a restart), by the (task_id, received_at) index.
	queryDedupeRows = `SELECT id, received_at, body_hash, dedupe_key IS NOT NULL FROM webhook_events
	WHERE task_id = ? AND received_at >= ? AND test = 0 AND replay_of IS NULL`
	// queryEventHash checks a memory hit against its row: deleted events
	// (retention, purges, a deleted task) are no duplicates' originals.
	queryEventHash = `SELECT body_hash FROM webhook_events WHERE id = ?`
)

func init() { ingestStmts = append(ingestStmts, queryEventHash) }

// newIngestDedupe reads what the batch's dedupe lookups need: the memory's
// rows now, the index's with the batch's other prefetch queries (its
// stored events are there once runQueued ran).
func newIngestDedupe(ctx context.Context, st *txStmts, mem *dedupeMemory, items []IngestItem) (*ingestDedupe, error) {
	d := &ingestDedupe{since: map[time.Duration]windowStart{}}
	need := func(int) bool { return true }
	if mem != nil {
		b, err := mem.begin(ctx, st, items)
		if err != nil {
			return nil, err
		}
		d.mem = b
		need = func(i int) bool {
			return b.needsIndex(items[i].Event.TaskID, d.from(st.tx.Now, items[i].DedupeWindow).us)
		}
		// Applied only once the transaction committed: Write may run the
		// batch again after BUSY, and a failed batch changes nothing.
		st.tx.onCommit = append(st.tx.onCommit, func() { b.commit(st.tx.Now) })
	}
	d.stored = st.queueDedupe(items, need)
	return d, nil
}

// from is the start of a window, formatted once per window length in the
// batch (every item of a batch has the same tx.Now).
func (d *ingestDedupe) from(now time.Time, window time.Duration) windowStart {
	f, ok := d.since[window]
	if !ok {
		t := now.Add(-window)
		f = windowStart{ts: TS(t), us: t.UnixMicro()} // both truncate to the µs
		d.since[window] = f
	}
	return f
}

// duplicateOf returns the stored event e duplicates within window, "" if none.
func (d *ingestDedupe) duplicateOf(ctx context.Context, st *txStmts, e *WebhookEvent, window time.Duration) (string, error) {
	from := d.from(st.tx.Now, window)
	prev, indexed := d.stored[[2]string{e.TaskID, e.BodyHash}]
	indexed = indexed && prev.receivedAt >= from.ts
	if d.mem != nil {
		k, ev, ok := d.mem.candidate(e, from.us)
		if ok && (!indexed || ev.at >= ParseTS(prev.receivedAt).UnixMicro()) {
			live, err := d.mem.verify(ctx, st, k, ev, e.BodyHash)
			if err != nil || live {
				return ev.id.String(), err
			}
		}
	}
	if indexed {
		return prev.id, nil
	}
	return "", nil
}

// dedupeKeyOf is the dedupe_key a new event is written with: NULL when
// memory holds it.
func (d *ingestDedupe) dedupeKeyOf(e *WebhookEvent, window time.Duration) any {
	if d.mem != nil && d.mem.hold(e, window, e.ReceivedAt.UnixMicro()) {
		return nil
	}
	return dedupeKey(e.BodyHash)
}

// dedupeBatch is one group commit's view of the dedupe memory: what it
// read, and what it changes once its transaction committed.
type dedupeBatch struct {
	mem   *dedupeMemory
	tasks map[string]*dedupeBatchTask
	room  int // entries the cap still allows
	adds  []dedupeAdd
	drops []dedupeAdd // entries whose rows are gone
}

// dedupeBatchTask is one task of the batch.
type dedupeBatchTask struct {
	t         *dedupeTask
	indexedAt int64       // t.indexedAt when the batch began
	load      *dedupeLoad // its rows read back by this batch, if any
	stored    time.Duration
	indexed   int64 // the newest event the batch wrote to the index
}

// dedupeLoad is a task's rows read back from the database.
type dedupeLoad struct {
	window    time.Duration
	rows      map[dedupeMemKey]dedupeMemEvent
	indexedAt int64
}

type dedupeAdd struct {
	k      dedupeMemKey
	e      dedupeMemEvent
	window time.Duration
}

// begin notes the batch's tasks and reads back the rows of those memory
// does not know within their window: after the open (a restart), or when
// a webhook's window grew.
func (m *dedupeMemory) begin(ctx context.Context, st *txStmts, items []IngestItem) (*dedupeBatch, error) {
	b := &dedupeBatch{mem: m, tasks: map[string]*dedupeBatchTask{}}
	longest := map[string]time.Duration{}
	var load []string
	m.mu.Lock()
	for _, it := range items {
		if it.DedupeWindow <= 0 {
			continue
		}
		id := it.Event.TaskID
		if b.tasks[id] == nil {
			t := m.task(id)
			b.tasks[id] = &dedupeBatchTask{t: t, indexedAt: t.indexedAt}
		}
		longest[id] = max(longest[id], it.DedupeWindow)
	}
	for id, bt := range b.tasks {
		if !bt.t.loaded || longest[id] > bt.t.window {
			load = append(load, id)
		}
	}
	b.room = m.limit - m.n
	m.mu.Unlock()
	for _, id := range load {
		if err := b.load(ctx, st, id, longest[id]); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func (b *dedupeBatch) load(ctx context.Context, st *txStmts, taskID string, window time.Duration) error {
	bt := b.tasks[taskID]
	l := &dedupeLoad{window: window, rows: map[dedupeMemKey]dedupeMemEvent{}}
	q, err := st.stmt(ctx, queryDedupeRows)
	if err != nil {
		return err
	}
	rows, err := q.QueryContext(ctx, taskID, TS(st.tx.Now.Add(-window)))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, at, hash string
		var indexed bool
		if err := rows.Scan(&id, &at, &hash, &indexed); err != nil {
			return err
		}
		us := ParseTS(at).UnixMicro()
		if indexed {
			l.indexedAt = max(l.indexedAt, us)
			continue
		}
		u, err := uuid.Parse(id)
		if err != nil {
			continue // never held in memory: its event was stored without a window
		}
		k := b.mem.key(bt.t, hash)
		if prev, ok := l.rows[k]; !ok || prev.at <= us {
			l.rows[k] = dedupeMemEvent{id: u, at: us}
		}
	}
	bt.load = l
	return rows.Err()
}

// needsIndex says whether an event of the task in the index can be
// inside a window starting at from.
func (b *dedupeBatch) needsIndex(taskID string, from int64) bool {
	bt := b.tasks[taskID]
	at := bt.indexedAt
	if bt.load != nil {
		at = max(at, bt.load.indexedAt)
	}
	return at > 0 && at >= from
}

// candidate is memory's newest event of e's task and body hash received
// at or after from (µs), not yet checked against its row.
func (b *dedupeBatch) candidate(e *WebhookEvent, from int64) (dedupeMemKey, dedupeMemEvent, bool) {
	bt := b.tasks[e.TaskID]
	k := b.mem.key(bt.t, e.BodyHash)
	b.mem.mu.Lock()
	ev, ok := b.mem.find(k, from)
	b.mem.mu.Unlock()
	if bt.load != nil {
		if le, hit := bt.load.rows[k]; hit && le.at >= from && (!ok || le.at > ev.at) {
			ev, ok = le, true
		}
	}
	return k, ev, ok
}

// verify checks a memory hit against its row: the event still exists
// and has the body hash (the key is 96 bits of it, not all of it).
func (b *dedupeBatch) verify(ctx context.Context, st *txStmts, k dedupeMemKey, ev dedupeMemEvent, bodyHash string) (bool, error) {
	var h string
	err := st.queryRow(ctx, queryEventHash, ev.id.String()).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		b.drops = append(b.drops, dedupeAdd{k: k, e: ev})
		return false, nil
	}
	return err == nil && h == bodyHash, err
}

// hold says whether memory will hold e (stored at at, µs): the window is
// short enough, the cap has room and the id fits an entry. Otherwise e is
// written to the index, and its task's lookups consult the index while
// e can be inside a window.
func (b *dedupeBatch) hold(e *WebhookEvent, window time.Duration, at int64) bool {
	bt := b.tasks[e.TaskID]
	if bt.stored == 0 || window < bt.stored {
		bt.stored = window
	}
	if window <= b.mem.maxWindow && b.room > 0 {
		if u, err := parseUUID(e.ID); err == nil {
			b.room--
			b.adds = append(b.adds, dedupeAdd{k: b.mem.key(bt.t, e.BodyHash), e: dedupeMemEvent{id: u, at: at}, window: window})
			return true
		}
	}
	bt.indexed = max(bt.indexed, at)
	return false
}

// commit applies the batch to memory after its transaction committed.
func (b *dedupeBatch) commit(now time.Time) {
	m := b.mem
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, bt := range b.tasks {
		t := bt.t
		if l := bt.load; l != nil {
			for k, e := range l.rows {
				m.add(k, e, l.window)
			}
			t.loaded, t.window, t.indexedAt = true, l.window, max(t.indexedAt, l.indexedAt)
		}
		t.indexedAt = max(t.indexedAt, bt.indexed)
		if bt.stored > 0 {
			// Entries are held for their own window: memory answers for
			// no longer one than the shortest stored since.
			t.window = min(t.window, bt.stored)
		}
	}
	for _, d := range b.drops {
		m.remove(d.k, d.e.id)
	}
	for _, a := range b.adds {
		m.add(a.k, a.e, a.window)
	}
	m.expire(now.UnixMicro())
	m.scheduleIdle(now.UnixMicro())
}
