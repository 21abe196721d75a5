package store

import (
	"context"
	"strconv"
	"strings"
	"sync"
)

// Values a multi-row INSERT's rows share are bound once per statement on
// SQLite. Binding is a tenth of the ingest writer's CPU in modernc's
// translated C: every value is looked up by its parameter's name, text is
// copied into C memory (malloc under a mutex) and freed after the step, and
// the statement's previous value is released. An event that opens an
// incident bound about 50 values, and half of them are the same in every
// row of a group commit: the transaction's time (an event's received_at
// and dispatched_at, an incident's four times, a timeline entry's time),
// the tenant (org and project), the provider and the columns a fresh
// Alertmanager delivery leaves empty (idempotency key, replay, error,
// dedupe key on the appliance). The shared form
//
//	INSERT INTO t (a, b, c) SELECT column1, ?, column2 FROM (VALUES (?,?),(?,?))
//
// binds b once (the SELECT list's parameters come first, in column order)
// and the rows' own values as before: the VALUES list runs as a
// co-routine, no temporary table, and each shared value is one register
// copy per row instead of a bind. A chunk whose rows differ in a shared
// column (a mixed batch: two tenants, a replay, a run started for one
// incident) runs the plain statement, as before. Numbered parameters
// (?1) would say the same more simply, but modernc resolves each
// numbered parameter's name by walking the statement's list of names,
// quadratic in a 64-row statement (notes: writer, session 6).
//
// PostgreSQL keeps the plain statements: its VALUES list would type the
// rows' parameters as text before the INSERT assigns them (an integer
// column then refuses them), and its pipeline sends them without waiting.

// sharedCols marks, per flush statement head, the columns (in the head's
// order) that are bound once per statement when every row holds the same
// value there.
var sharedCols = map[string][]bool{
	// id, org_id, project_id, task_id, received_at, provider, event_type,
	// idem_key, body_hash, verification, headers, body, body_size, raw,
	// alerts, status, dispatch, error, replay_of, test, dispatched_at,
	// dedupe_key. The idempotency key is the row's own when set (some
	// providers send one per delivery): not shared.
	flushEventHead: {false, true, true, false, true, true, false,
		false, false, true, false, false, false, true,
		false, false, false, true, true, true, true,
		true},
	// id, org_id, project_id, task_id, provider, title, severity, status,
	// alert_count, event_count, session_id, opened_at, last_alert_at,
	// created_at, updated_at, open_fingerprints, main_key, main_key_held,
	// opened_entry.
	// The session is set on the one incident a batch starts a run for: not
	// shared.
	flushIncidentHead: {false, true, true, false, true, false, false, true,
		false, false, false, true, true,
		true, true, false, false, false, false},
	// project_id, key, incident_id
	flushKeyHead:    {true, false, false},
	flushNewKeyHead: {true, false, false},
	// id, incident_id, at, kind, actor, text, data, follow
	flushTimelineHead: {false, false, true, true, true, false, false, false},
}

// maybeSharedCols marks, per head, columns that differ between the rows of
// some group commits and not of others: a chunk whose rows all hold one
// value there binds it once too (sharedStmtFor), else per row as in the
// shared form. Under an alert storm of one tenant the events' task, type,
// status, headers, body size and (absent) idempotency key, and the
// incidents' task, severity, counters, (absent) run and main key, repeat in
// every row; with several webhooks the tasks differ.
var maybeSharedCols = map[string][]bool{
	flushEventHead: {false, false, false, true, false, false, true,
		true, false, false, true, false, true, false,
		false, true, false, false, false, false, false,
		false},
	flushIncidentHead: {false, false, false, true, false, false, true, false,
		true, true, true, false, false,
		false, false, false, true, false, false},
}

// maxSharedForms bounds the statement texts sharedStmtFor builds (a few
// combinations per head and row count are what a workload uses).
const maxSharedForms = 128

var sharedForms struct {
	sync.Mutex
	m map[sharedForm]string
}

type sharedForm struct {
	head string
	bits uint64 // the maybe-shared columns bound once (bit i: column i)
	rows int
}

// sharedStmtFor is head's shared form for rows rows with mask's columns
// bound once (shared plus the maybe-shared columns of bits), and false when
// maxSharedForms texts are built already.
func sharedStmtFor(head string, bits uint64, rows int, mask []bool) (string, bool) {
	f := sharedForm{head, bits, rows}
	sharedForms.Lock()
	defer sharedForms.Unlock()
	if q, ok := sharedForms.m[f]; ok {
		return q, true
	}
	if len(sharedForms.m) >= maxSharedForms {
		return "", false
	}
	if sharedForms.m == nil {
		sharedForms.m = map[sharedForm]string{}
	}
	q := sharedRowsStmt(head, mask, rows)
	sharedForms.m[f] = q
	return q, true
}

// moreShared returns, for rows (cols values each), the maybe-shared
// columns in which every row holds the first row's value (bit i: column i)
// and mask (in buf): shared with those added.
func moreShared(shared, maybe []bool, cols int, rows []any, buf []bool) (bits uint64, mask []bool) {
	n := len(rows) / cols
	for c, m := range maybe {
		if !m {
			continue
		}
		v, same := rows[c], true
		for r := 1; r < n && same; r++ {
			same = sameValue(v, rows[r*cols+c])
		}
		if same {
			bits |= 1 << c
		}
	}
	if bits == 0 {
		return 0, shared
	}
	mask = append(buf[:0], shared...)
	for c := range mask {
		mask[c] = mask[c] || bits&(1<<c) != 0
	}
	return bits, mask
}

// sharedStmts are the shared forms by head and row count (SQLite only).
var sharedStmts = func() map[string]map[int]string {
	m := map[string]map[int]string{}
	for head, shared := range sharedCols {
		m[head] = map[int]string{}
		for _, n := range flushChunks {
			if n > 1 {
				m[head][n] = sharedRowsStmt(head, shared, n)
			}
		}
	}
	return m
}()

// sqliteIngestStmts are prepared on the writer with ingestStmts on SQLite.
var sqliteIngestStmts = func() []string {
	var qs []string
	for _, byN := range sharedStmts {
		for _, q := range byN {
			qs = append(qs, q)
		}
	}
	return qs
}()

// sqliteIngestList is ingestStmts and sqliteIngestStmts (built at first
// use: ingestStmts grows in init functions).
var sqliteIngestList = sync.OnceValue(func() []string {
	return append(append([]string(nil), ingestStmts...), sqliteIngestStmts...)
})

// ingestStmtList is what the ingest and dispatch transactions prepare on
// the writer connection.
func (db *DB) ingestStmtList() []string {
	if db.pg {
		return ingestStmts
	}
	return sqliteIngestList()
}

// prepareIngest prepares the ingest's statements on the writer once
// (DB.writerStmts stores each as it goes, so the list's last one being
// there means all are); a transaction then finds the ones it runs in
// db.wstmts as it runs them (txStmts.stmt). Building the map of all of
// them for every batch hashed a hundred statement texts, some of them
// kilobytes long: a tenth of the writer's instructions per event when
// batches are small (a few events: 64 connections).
func (db *DB) prepareIngest(ctx context.Context) error {
	list := db.ingestStmtList()
	if _, ok := db.wstmts.Load(list[len(list)-1]); ok {
		return nil
	}
	_, err := db.writerStmts(ctx, list...)
	return err
}

// sharedRowsStmt is head's statement for rows rows binding the shared
// columns once: head is `INSERT INTO t (cols) VALUES `.
func sharedRowsStmt(head string, shared []bool, rows int) string {
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(head, "VALUES "))
	b.WriteString("SELECT ")
	own := 0
	for i, s := range shared {
		if i > 0 {
			b.WriteString(", ")
		}
		if s {
			b.WriteString("?")
		} else {
			own++
			b.WriteString("column")
			b.WriteString(strconv.Itoa(own))
		}
	}
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?,", own), ",") + ")"
	b.WriteString(" FROM (VALUES ")
	b.WriteString(strings.TrimSuffix(strings.Repeat(tuple+",", rows), ","))
	b.WriteString(")")
	return b.String()
}

// sharedArgs returns the shared form's arguments for rows (cols values
// each, in head order) when every row holds the first row's value in each
// shared column; ok false when one differs (or holds a value that does not
// compare, which shared columns never should).
func sharedArgs(shared []bool, cols int, rows []any, buf []any) (args []any, ok bool) {
	n := len(rows) / cols
	args = buf[:0]
	for c, s := range shared {
		if !s {
			continue
		}
		v := rows[c]
		for r := 1; r < n; r++ {
			if !sameValue(v, rows[r*cols+c]) {
				return nil, false
			}
		}
		args = append(args, v)
	}
	for r := 0; r < n; r++ {
		for c, s := range shared {
			if !s {
				args = append(args, rows[r*cols+c])
			}
		}
	}
	return args, true
}

// sameValue reports a == b for the values rows bind in shared columns
// (text, integers, booleans, NULL); anything else counts as different.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case nil:
		return b == nil
	case int:
		y, ok := b.(int)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	}
	return false
}
