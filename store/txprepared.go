package store

import (
	"context"
	"database/sql"
)

// A hot write path (the webhook ingest group commit) runs many statements
// per transaction, most of them written inline where they are used (run
// recording, incident correlation, timeline). An agent run's own writes are
// hot too in an alert storm (its start, turn, events and end: a task's run
// after another under overlap_policy skip), and so are the group commits. Parsing and planning them
// afresh for every event was over a quarter of the ingest writer's CPU.
// writeHot runs such a transaction with its statements prepared on the
// writer connection: a statement seen for the first time runs unprepared
// and is prepared after the commit (preparing needs the one writer
// connection, which the transaction holds), so from the second transaction
// on it runs prepared. Only hot paths learn, and at most maxHotStmts
// statements are kept, so dynamic query texts cannot grow the cache.
const maxHotStmts = 128

type hotStmts struct {
	db     *DB
	bound  map[string]*sql.Stmt // bound to this transaction
	missed []string
}

// writeHot is Write for a hot path (see above).
func (db *DB) writeHot(ctx context.Context, fn func(tx *Tx) error) error {
	var hot *hotStmts
	err := db.Write(ctx, func(tx *Tx) error {
		tx.hot = &hotStmts{db: db, bound: map[string]*sql.Stmt{}}
		hot = tx.hot
		return fn(tx)
	})
	// Read after Write: statements run before commit (Tx.beforeCommit, the
	// monthly counters' UPDATE) are learned too, not parsed in every batch.
	var missed []string
	if hot != nil {
		missed = hot.missed
	}
	for _, q := range missed {
		if db.nhot.Add(1) > maxHotStmts {
			break
		}
		// A statement that does not prepare (never expected) simply stays unprepared.
		_, _ = db.writerStmts(context.WithoutCancel(ctx), q)
	}
	return err
}

// stmt returns q bound to the transaction when it is prepared on the writer.
func (h *hotStmts) stmt(ctx context.Context, tx *sql.Tx, q string) *sql.Stmt {
	if st := h.bound[q]; st != nil {
		return st
	}
	v, ok := h.db.wstmts.Load(q)
	if !ok {
		for _, m := range h.missed {
			if m == q {
				return nil
			}
		}
		h.missed = append(h.missed, q)
		return nil
	}
	st := tx.StmtContext(ctx, v.(*sql.Stmt))
	h.bound[q] = st
	return st
}

// ExecContext runs q prepared in a hot transaction, else as database/sql does.
func (tx *Tx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if tx.hot != nil {
		if st := tx.hot.stmt(ctx, tx.Tx, q); st != nil {
			return st.ExecContext(ctx, args...)
		}
	}
	return tx.Tx.ExecContext(ctx, q, args...)
}

// QueryContext: see ExecContext.
func (tx *Tx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if tx.hot != nil {
		if st := tx.hot.stmt(ctx, tx.Tx, q); st != nil {
			return st.QueryContext(ctx, args...)
		}
	}
	return tx.Tx.QueryContext(ctx, q, args...)
}

// QueryRowContext: see ExecContext.
func (tx *Tx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	if tx.hot != nil {
		if st := tx.hot.stmt(ctx, tx.Tx, q); st != nil {
			return st.QueryRowContext(ctx, args...)
		}
	}
	return tx.Tx.QueryRowContext(ctx, q, args...)
}
