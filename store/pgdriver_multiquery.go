package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Several queries in one round trip. A group commit reads what its batch
// needs before it writes (the stored correlation keys, the dedupe window's
// events, the webhooks, the target tasks and their active runs): each
// query was a round trip of its own on the single writer connection, six
// or seven per commit, each waking both processes and leaving the writer
// idle while PostgreSQL answered. pgPipelined joins the queries' texts into
// one query text the driver recognizes; it sends them (behind the
// transaction's queued statements) in one round trip and returns their
// rows as consecutive result sets (sql.Rows.NextResultSet), one per query.
// The arguments are the queries' arguments in order. Each query is the same
// prepared statement as when run alone: plans, rows and errors are its own.

// pgPipelineSep separates the queries; a NUL byte is never part of SQL
// text (PostgreSQL rejects it), so no single query can look like a list.
const pgPipelineSep = "\x00"

// pgPipelined is the query text that runs qs in one round trip.
func pgPipelined(qs ...string) string {
	return pgPipelineSep + strings.Join(qs, pgPipelineSep)
}

// queryPipelined runs pgPipelined's queries.
func (dc *pgDriverConn) queryPipelined(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	parts := strings.Split(query[len(pgPipelineSep):], pgPipelineSep)
	if dc.pend == nil {
		dc.pend = dc.newPending() // before preparing: the cache keeps the parts (prepared)
	}
	sds := make([]*pgconn.StatementDescription, len(parts))
	n := 0
	for i, q := range parts {
		sd, err := dc.prepared(ctx, pgSQL(q))
		if err != nil {
			return nil, err
		}
		sds[i] = sd
		n += len(sd.ParamOIDs)
	}
	// Checked before anything is queued: params cannot fail halfway, after
	// some of the queries joined the transaction's queued statements.
	if n != len(args) {
		return nil, fmt.Errorf("postgres: %d arguments for %d parameters of %d pipelined queries", len(args), n, len(sds))
	}
	for _, a := range args {
		if !pgParamType(a.Value) {
			return nil, fmt.Errorf("postgres: unsupported argument type %T", a.Value)
		}
	}
	dc.closeRun()
	for _, sd := range sds {
		k := len(sd.ParamOIDs)
		vals, formats, err := dc.params(sd, args[:k])
		if err != nil {
			return nil, err // not reached: checked above
		}
		dc.pend.b.ExecStatement(sd, vals, formats, nil) // encoded now: vals may be reused
		args = args[k:]
	}
	return dc.readQueries(ctx, sds)
}

// pgParamType says whether params encodes v (database/sql's converted values).
func pgParamType(v any) bool {
	switch v.(type) {
	case nil, int64, float64, bool, string, []byte, time.Time:
		return true
	}
	return false
}

// readQueries sends the queued statements, whose last len(sds) are the
// queries sds, reads the outcomes of the statements ahead of them (the
// first failure is the error) and returns the queries' rows, the first
// result set ready.
func (dc *pgDriverConn) readQueries(ctx context.Context, sds []*pgconn.StatementDescription) (driver.Rows, error) {
	p := dc.pend
	dc.pend = nil
	dc.trips++
	mrr := dc.c.ExecBatch(ctx, &p.b)
	failed := func(q string, err error) (driver.Rows, error) {
		if cerr := mrr.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = errors.New("postgres: a pipelined statement returned no result")
		}
		return nil, dc.fail(err, q)
	}
	for _, q := range p.sql {
		if !mrr.NextResult() {
			return failed(q, nil)
		}
		if _, err := mrr.ResultReader().Close(); err != nil {
			return failed(q, err)
		}
	}
	// The messages were written (ExecBatch writes before it returns); the
	// statements' descriptions stay with mrr until its rows are read.
	dc.recycle(p)
	r := &pgRows{mrr: mrr, rest: sds}
	if err := r.nextSet(); err != nil {
		return nil, dc.fail(err, sds[0].SQL)
	}
	return r, nil
}

// nextSet moves to the next query's result set and reads its first row,
// so that the query's error is the error of the step that reached it. At
// the last set's end (or on an error) mrr is read to its end.
func (r *pgRows) nextSet() error {
	if !r.mrr.NextResult() {
		err := r.mrr.Close()
		r.mrr = nil
		if err == nil {
			err = errors.New("postgres: a pipelined query returned no result")
		}
		return err
	}
	r.rr, r.sd, r.rest, r.cols = r.mrr.ResultReader(), r.rest[0], r.rest[1:], nil
	r.preloaded = r.rr.NextRow()
	r.done = !r.preloaded
	if r.done {
		_, err := r.rr.Close()
		if err != nil || len(r.rest) == 0 {
			return r.closeBatch(err)
		}
	}
	return nil
}

// HasNextResultSet: another pipelined query's rows follow.
func (r *pgRows) HasNextResultSet() bool { return len(r.rest) > 0 && r.mrr != nil }

// NextResultSet skips what is left of the current query's rows.
func (r *pgRows) NextResultSet() error {
	if !r.HasNextResultSet() {
		return io.EOF
	}
	if !r.done {
		r.done = true
		if _, err := r.rr.Close(); err != nil {
			return withStatement(r.closeBatch(err), r.sd.SQL)
		}
	}
	if err := r.nextSet(); err != nil {
		return withStatement(err, r.sd.SQL)
	}
	return nil
}
