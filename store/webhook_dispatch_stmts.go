package store

import (
	"context"
	"database/sql"
)

// txStmts is the state of one dispatch transaction. It caches prepared
// statements (a batch runs the same few statements hundreds of times, and
// parsing the SQL again for each was the dispatcher's largest cost; they
// close with the transaction), the incidents the batch has joined by
// project and key (an alert storm looks its incident up once, not once per
// alert) and their counter deltas.
type txStmts struct {
	tx     *Tx
	m      map[string]*sql.Stmt
	open   map[string]*Incident
	counts map[string]*incidentDelta
	// tasks and active: the batch's target tasks and the pending or running
	// run of each, read once per batch (the batch's own
	// recordings are the only writes to either meanwhile).
	tasks map[string]*Task
	// lastTask: the last task found in tasks (task); lastSkip and
	// lastSkipNote: the last skip's strings (webhookSkip, skipFollowUp).
	lastTask     *Task
	lastSkip     runSkip
	lastSkipNote skipNote
	active       map[string]string // task id -> its pending or running run ("" none)
	// pending, newKeyArgs, keyArgs and tl: incidents the batch opened, the
	// key rows of those and of stored incidents, and the timeline rows it
	// wrote, inserted by flushPending (webhook_dispatch_flush.go).
	pending      map[string]*pendingIncident
	pendingOrder []*pendingIncident
	newKeyArgs   []any
	keyArgs      []any
	tl           []timelineRow
	// followRow: 1 + the index in tl of the current event's alert entry,
	// which its dispatch's entries follow (0: none; followUp); followTo:
	// that entry when it is an opened incident's first (pendingIncident).
	followRow int
	followTo  *timelineRow
	// probed: the correlation keys the batch looked up in advance
	// (project "\x00" key -> whether the database holds it; prefetchKeys).
	probed map[string]bool
	keyBuf []byte // projectKey's
	// ending: flushIncidents runs, the batch's last statements (flushPending
	// keeps no bookkeeping for later joins).
	ending bool
	now    string // TS(tx.Now) once formatted (ts)
	// sharedBuf: insertRows' arguments for a shared-form statement, reused.
	sharedBuf []any
	maskBuf   []bool // insertRows' mask with the maybe-shared columns, reused
	// unmoved: the open_fingerprints of incidents the batch may join that
	// are not yet in incident_alerts (read with the incident, or flushed
	// by this batch); the first join moves them (newAlertsTx).
	unmoved map[string][]string
	// mainKeys: the main_key (migration 0157) of stored incidents the batch
	// joined or flushed, by incident id: addKey does not add it again.
	mainKeys map[string]string
	// keyMem: the batch's view of the open main keys in memory (SQLite;
	// txStmts.keys), nil until its first lookup.
	keyMem *keyBatch
	// queued: the batch's prefetch queries not yet run (runQueued).
	queued []queuedQuery
}

func newTxStmts(tx *Tx) *txStmts {
	return &txStmts{tx: tx, m: map[string]*sql.Stmt{}, open: map[string]*Incident{}, counts: map[string]*incidentDelta{},
		tasks: map[string]*Task{}, active: map[string]string{}, pending: map[string]*pendingIncident{},
		probed: map[string]bool{}, unmoved: map[string][]string{},
		mainKeys: map[string]string{}}
}

func (s *txStmts) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if st := s.m[q]; st != nil {
		return st, nil
	}
	if v, ok := s.tx.db.wstmts.Load(q); ok { // prepared on the writer (DB.writerStmts)
		// Binding reuses the statement already prepared on this connection.
		st := s.tx.StmtContext(ctx, v.(*sql.Stmt))
		s.m[q] = st
		return st, nil
	}
	st, err := s.tx.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	s.m[q] = st
	return st, nil
}

func (s *txStmts) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if res, ok, err := s.tx.execDirect(ctx, q, args); ok {
		return res, err // on SQLite's writer connection (db_writer_conn.go)
	}
	st, err := s.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (s *txStmts) queryRow(ctx context.Context, q string, args ...any) interface{ Scan(...any) error } {
	st, err := s.stmt(ctx, q)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

// errRow is a row whose Scan reports a preparation error.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
