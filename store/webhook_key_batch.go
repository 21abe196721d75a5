package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/google/uuid"
)

// keyBatch is one dispatch transaction's view of the key memory: what it
// read back and what it changes, applied once the transaction committed
// (Write may run a batch again after BUSY, and a failed batch changes
// nothing).
type keyBatch struct {
	mem      *keyMemory
	now      time.Time
	projects map[string]*keyBatchProject
	// changes: the batch's entries by slot; a zero id drops the slot.
	changes map[uint64]keyEntry
	room    int // new entries the cap still allows
}

// keyBatchProject is one project of the batch.
type keyBatchProject struct {
	p      *keyProject
	window time.Duration // p.window, or what this batch loaded
	keep   time.Duration // p.keep and the windows of this batch's lookups
}

const (
	// queryHeldKeys reads a project's held keys back after a restart (or
	// for a window longer than memory answers for): by incidents_project,
	// so it reads each open incident of the project once (keyBatch.ensure).
	queryHeldKeys = `SELECT id, main_key_held, last_alert_at FROM incidents WHERE project_id = ?
	AND status IN ('triggered', 'acknowledged') AND main_key_held IS NOT NULL AND last_alert_at >= ?`
	// unholdKey moves a held row's key into the index (keyBatch.unhold).
	unholdKey = `UPDATE incidents SET main_key = main_key_held, main_key_held = NULL WHERE id = ?`
)

// keys returns the batch's view of the key memory, nil on PostgreSQL.
func (s *txStmts) keys() *keyBatch {
	if s.keyMem != nil || s.tx.db.pg {
		return s.keyMem
	}
	b := &keyBatch{mem: s.tx.db.keyMemory(), now: s.tx.Now, projects: map[string]*keyBatchProject{},
		changes: make(map[uint64]keyEntry, 128)} // a group commit's incidents, without regrowth
	b.mem.mu.Lock()
	b.room = b.mem.limit - len(b.mem.m)
	b.mem.mu.Unlock()
	s.keyMem = b
	s.tx.onCommit = append(s.tx.onCommit, b.commit)
	return b
}

// project returns the batch's record of a project.
func (b *keyBatch) project(id string) *keyBatchProject {
	bp := b.projects[id]
	if bp == nil {
		b.mem.mu.Lock()
		p := b.mem.project(id)
		bp = &keyBatchProject{p: p, window: p.window, keep: p.keep}
		b.mem.mu.Unlock()
		b.projects[id] = bp
	}
	return bp
}

// get is the batch's entry for a slot: its own change, else memory's.
func (b *keyBatch) get(slot uint64) (keyEntry, bool) {
	if e, ok := b.changes[slot]; ok {
		return e, e.id != uuid.Nil
	}
	b.mem.mu.Lock()
	e, ok := b.mem.m[slot]
	b.mem.mu.Unlock()
	return e, ok
}

// add sets a slot memory holds nothing in.
func (b *keyBatch) add(slot uint64, e keyEntry) {
	b.room--
	b.changes[slot] = e
}

func (b *keyBatch) drop(slot uint64) {
	if _, held := b.get(slot); held {
		b.room++
	}
	b.changes[slot] = keyEntry{}
}

// ensure makes memory answer for the project's lookups within window:
// it reads the project's held keys back when memory does not know them
// that far (after the open, or for a longer window than before). The read
// goes through the project's open incidents (incidents_project): about a
// µs or two per open incident, once per project and restart.
func (b *keyBatch) ensure(ctx context.Context, st *txStmts, projectID string, window time.Duration) error {
	bp := b.project(projectID)
	window = max(window, time.Minute) // a load at all: window 0 would mean "not loaded"
	bp.keep = max(bp.keep, window)
	if window <= bp.window {
		return nil
	}
	load := max(window, bp.keep)
	q, err := st.stmt(ctx, queryHeldKeys)
	if err != nil {
		return err
	}
	rows, err := q.QueryContext(ctx, projectID, TS(b.now.Add(-load)))
	if err != nil {
		return err
	}
	type heldRow struct {
		id, key string
		at      time.Time
	}
	var conflicts []heldRow
	for rows.Next() {
		var r heldRow
		var at string
		if err := rows.Scan(&r.id, &r.key, &at); err != nil {
			rows.Close()
			return err
		}
		r.at = ParseTS(at)
		u, err := uuid.Parse(r.id)
		slot := b.mem.slot(bp.p, r.key)
		cur, taken := b.get(slot)
		switch {
		case err == nil && taken && cur.id == u:
			cur.at = max(cur.at, unixUp(r.at))
			b.changes[slot] = cur
		case err == nil && !taken:
			b.add(slot, keyEntry{id: u, at: unixUp(r.at), proj: bp.p.idx})
		default:
			// Its slot names another incident: the index takes this one.
			conflicts = append(conflicts, r)
		}
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return err
	}
	rows.Close()
	for _, r := range conflicts {
		if err := b.unhold(ctx, st, projectID, r.key, r.id); err != nil {
			return err
		}
	}
	bp.window = load
	return nil
}

// unhold moves a held row's key into the index, for an incident memory
// cannot name: the lookups find it there from now on, this batch's too.
func (b *keyBatch) unhold(ctx context.Context, st *txStmts, projectID, key, id string) error {
	if _, err := st.exec(ctx, unholdKey, id); err != nil {
		return err
	}
	st.probed[projectID+"\x00"+key] = true
	return nil
}

// hold says whether memory will hold the main key of an incident the
// batch opened: its project is loaded, its slot is free and the cap has
// room. Otherwise its key goes to the index (main_key).
func (b *keyBatch) hold(projectID, key, id string) bool {
	bp := b.projects[projectID]
	if bp == nil || bp.window <= 0 || b.room <= 0 {
		return false
	}
	u, err := parseUUID(id)
	if err != nil {
		return false
	}
	slot := b.mem.slot(bp.p, key)
	if _, taken := b.get(slot); taken {
		return false
	}
	b.add(slot, keyEntry{id: u, at: unixUp(b.now), proj: bp.p.idx})
	return true
}

// commit applies the batch to memory after its transaction committed.
func (b *keyBatch) commit() {
	m := b.mem
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, bp := range b.projects {
		bp.p.window = max(bp.p.window, bp.window)
		bp.p.keep = max(bp.p.keep, bp.keep)
	}
	for slot, e := range b.changes {
		if e.id == uuid.Nil {
			delete(m.m, slot)
		} else {
			m.m[slot] = e
		}
	}
	m.sweep(b.now)
	m.scheduleIdle()
}

// keyFind is the open incident a key maps an event to within its window,
// as queryOpenIncidentByKey over every row would answer: memory's
// candidate, read back and checked, against the SQL lookup over the rows
// memory does not hold (run only when the prefetch found the key there).
// It returns nil when no incident is open under the key within window.
func (s *txStmts) keyFind(ctx context.Context, projectID, key string, window time.Duration) (*Incident, error) {
	since := s.tx.Now.Add(-window)
	var held *foundIncident
	if b := s.keys(); b != nil {
		if err := b.ensure(ctx, s, projectID, window); err != nil {
			return nil, err
		}
		bp := b.projects[projectID]
		slot := b.mem.slot(bp.p, key)
		if e, ok := b.get(slot); ok && e.proj == bp.p.idx {
			f, err := s.readIncident(ctx, e.id.String())
			switch {
			case IsNotFound(err):
				b.drop(slot) // deleted (retention, its project or org)
			case err != nil:
				return nil, err
			case f.inc.ProjectID != projectID || f.held != key:
				// Another key's slot (a hash collision): this key has no entry.
			case f.inc.Status == IncidentResolved:
				b.drop(slot)
			case !f.inc.LastAlertAt.Before(since):
				held = f
			}
		}
	}
	var found *foundIncident
	if !s.keyAbsent(projectID, key) {
		from := TS(since)
		var id string
		err := s.queryRow(ctx, queryOpenIncidentByKey, projectID, key, from, projectID, key, from).Scan(&id)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return nil, err
		case held != nil && held.inc.ID == id:
			found = held
		default:
			if found, err = s.readIncident(ctx, id); err != nil {
				return nil, err
			}
		}
	}
	// The newest last alert wins, as ORDER BY at DESC in the SQL lookup
	// (which leaves ties in no particular order).
	if found == nil || (held != nil && held.inc.LastAlertAt.After(found.inc.LastAlertAt)) {
		found = held
	}
	if found == nil {
		return nil, nil
	}
	return found.inc, s.joining(ctx, projectID, found)
}

// foundIncident is an incident read by id with the columns the join needs.
type foundIncident struct {
	inc        *Incident
	fps        sql.NullString // open_fingerprints
	main, held string         // main_key, main_key_held
}

func (s *txStmts) readIncident(ctx context.Context, id string) (*foundIncident, error) {
	var fps, main, held sql.NullString
	inc, err := scanIncident(scanAlso{s.queryRow(ctx, queryIncidentByID, id), []any{&fps, &main, &held}})
	if err != nil {
		return nil, err
	}
	return &foundIncident{inc: inc, fps: fps, main: main.String, held: held.String}, nil
}

// joining records what the batch needs of a stored incident it joins:
// its unmoved fingerprints, its main key (the batch adds no row for it),
// and, when memory holds that key, the entry's new time (its last alert
// is now); a held row memory does not name goes to the index.
func (s *txStmts) joining(ctx context.Context, projectID string, f *foundIncident) error {
	inc := f.inc
	if f.fps.Valid {
		if err := s.holdUnmoved(inc.ID, f.fps.String); err != nil {
			return err
		}
	}
	switch {
	case f.main != "":
		s.mainKeys[inc.ID] = f.main
	case f.held != "":
		s.mainKeys[inc.ID] = f.held
		b := s.keys()
		if b == nil {
			return nil // never held on PostgreSQL
		}
		bp := b.projects[projectID]
		slot := b.mem.slot(bp.p, f.held)
		u, _ := parseUUID(inc.ID)
		if e, ok := b.get(slot); ok && e.id == u {
			e.at = unixUp(s.tx.Now)
			b.changes[slot] = e
			return nil
		}
		return b.unhold(ctx, s, projectID, f.held, inc.ID)
	}
	return nil
}
