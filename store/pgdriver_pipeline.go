package store

import (
	"context"
	"database/sql/driver"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// Pipelining inside write transactions (issue 20: durable webhook ingest on
// PostgreSQL). Each statement is a round trip to the server, and on a busy
// machine a round trip costs far more than the statement: the ingest group
// commit of 32 deliveries spent ~70 round trips (two INSERTs per delivery)
// and ~15 ms, so one server's single writer stored about 2k events/s.
//
// The statements listed in pgDeferrable are ones whose callers use nothing
// of the outcome but the error, and only to abandon the transaction. Inside
// a transaction the driver queues them (Bind/Execute, no Sync) and answers at
// once; the queue goes to the server with the transaction's next other
// statement, or with COMMIT, in one round trip. A queued statement that fails
// makes that next statement (or COMMIT) fail with its error, before the
// transaction can commit, so the transaction fails as it did: nothing of it
// is stored, and a serialization failure is still retried by Write.
// synchronous_commit is untouched: COMMIT still returns after the WAL flush.
var pgDeferrable = map[string]bool{
	insertWebhookEvent: true, // webhook_event.go, InsertWebhookEvents: `if _, err := ...; err != nil { return err }`
	insertTimeline:     true, // incident.go, addTimelineTx and the ingest dispatch: the same
	insertAgentSession: true, // agentsession.go, CreateAgentSessionTx: every caller returns the error
	// webhook_dispatch_run.go, recordRun: a fresh event's run (its unique key
	// is the event's id); a conflict still fails the batch.
	insertWebhookTaskRun: true,
	// taskrun.go and agentsession_events.go: a run's task mirror, session
	// events and transcript (every caller returns only the error).
	updateTaskRunStarted: true,
	updateTaskRunEnded:   true,
	insertSessionEvent:   true,
	upsertTranscript:     true,
	// webhook_dispatch.go, the dispatcher's batch: results unused, errors returned.
	insertIncidentKey:    true,
	updateIncidentCounts: true,
	dispatchedEvent:      true,
	dispatchedEvent[:len(dispatchedEvent)-len(dispatchedEventWhere)] + `, body = NULL` + dispatchedEventWhere: true,
}

func init() {
	// webhook_dispatch_flush.go: a batch's multi-row incident, key, alert and
	// timeline INSERTs (insertRows returns only their error).
	for _, byN := range flushStmts {
		for _, q := range byN {
			pgDeferrable[q] = true
		}
	}
}

// dispatchedEvent is applyDispatch's status update as webhook_dispatch.go
// writes it (a copy: if that text changes, the statement is simply no
// longer queued).
const (
	dispatchedEventWhere = ` WHERE id = ?`
	dispatchedEvent      = `UPDATE webhook_events SET status = ?, dispatch = ?, error = ?, dispatched_at = ?` + dispatchedEventWhere
)

// pgMaxPending bounds the statements queued before they are sent anyway.
const pgMaxPending = 512

// pgPending is a transaction's queued statements.
type pgPending struct {
	b     pgconn.Batch
	sql   []string
	begin bool  // the transaction's BEGIN is the first queued statement
	run   pgRun // flush statements' rows gathered into one (pgdriver_coalesce.go)
}

// deferredResult answers a queued statement: its row count is not known yet.
type deferredResult struct{}

var errDeferredResult = errors.New("postgres: the statement was pipelined; its row count is not known")

func (deferredResult) LastInsertId() (int64, error) { return 0, errDeferredResult }
func (deferredResult) RowsAffected() (int64, error) { return 0, errDeferredResult }

// deferExec queues a pgDeferrable statement of the open transaction.
func (dc *pgDriverConn) deferExec(ctx context.Context, sd *pgconn.StatementDescription, args []driver.NamedValue) (driver.Result, error) {
	c, err := dc.coalescer(ctx, sd)
	if err != nil {
		return nil, err
	}
	if len(args) != len(sd.ParamOIDs) {
		c = nil // params reports the mismatch
	}
	if dc.pend == nil {
		dc.pend = dc.newPending()
	}
	if c != nil && dc.gather(c, args) {
		return deferredResult{}, nil
	}
	dc.closeRun()
	vals, formats, err := dc.params(sd, args)
	if err != nil {
		return nil, err
	}
	dc.pend.b.ExecStatement(sd, vals, formats, nil) // encoded now: vals may be reused
	dc.pend.sql = append(dc.pend.sql, sd.SQL)
	if len(dc.pend.sql) >= pgMaxPending {
		if _, err := dc.sendPending(ctx, nil); err != nil {
			return nil, err
		}
	}
	return deferredResult{}, nil
}

// sendPending sends the queued statements, then the one tail adds (if
// any), in one round trip, and returns the last statement's command tag.
// The first failure is the error, naming its statement.
func (dc *pgDriverConn) sendPending(ctx context.Context, tail func(b *pgconn.Batch, sql *[]string)) (pgconn.CommandTag, error) {
	p := dc.pend
	dc.pend = nil
	if p == nil {
		p = dc.newPending()
	}
	dc.pend = p
	dc.closeRun()
	dc.pend = nil
	if tail != nil {
		tail(&p.b, &p.sql)
	}
	dc.trips++
	res, err := dc.c.ExecBatch(ctx, &p.b).ReadAll()
	for i, r := range res {
		if r.Err != nil {
			err, res = r.Err, res[:i]
			break
		}
	}
	if err != nil {
		q := "pipelined statements"
		if len(res) < len(p.sql) {
			q = p.sql[len(res)]
		}
		dc.recycle(p)
		return pgconn.CommandTag{}, dc.fail(err, q)
	}
	dc.recycle(p)
	if len(res) == 0 {
		return pgconn.CommandTag{}, nil
	}
	return res[len(res)-1].CommandTag, nil
}

// flushPending sends what is queued before a statement that needs its own
// answer (a query, a statement outside pgDeferrable).
func (dc *pgDriverConn) flushPending(ctx context.Context) error {
	if dc.pend == nil {
		return nil
	}
	_, err := dc.sendPending(ctx, nil)
	return err
}

// execAfterPending runs one statement behind the queued ones, one round trip.
func (dc *pgDriverConn) execAfterPending(ctx context.Context, sd *pgconn.StatementDescription, args []driver.NamedValue) (driver.Result, error) {
	vals, formats, err := dc.params(sd, args)
	if err != nil {
		return nil, err // the queue stays: it goes with the next statement or COMMIT
	}
	tag, err := dc.sendPending(ctx, func(b *pgconn.Batch, sql *[]string) {
		b.ExecStatement(sd, vals, formats, nil)
		*sql = append(*sql, sd.SQL)
	})
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(tag.RowsAffected()), nil
}

// commitPending sends the queued statements and COMMIT in one round trip.
// On a failure the transaction is rolled back (the server skipped COMMIT).
func (dc *pgDriverConn) commitPending() error {
	ctx := context.Background()
	tag, err := dc.sendPending(ctx, func(b *pgconn.Batch, sql *[]string) {
		b.ExecParams("COMMIT", nil, nil, nil, nil)
		*sql = append(*sql, "COMMIT")
	})
	if err != nil {
		if dc.c.TxStatus() != 'I' {
			dc.trips++
			_, _ = dc.c.Exec(ctx, "ROLLBACK").ReadAll()
		}
		return err
	}
	if tag.String() == "ROLLBACK" {
		return errors.New("postgres: transaction rolled back at commit")
	}
	return nil
}

// queryAfterPending runs a query behind the queued statements in one round
// trip: their outcomes are read first (the first failure is the query's
// error), then the query's rows stream as usual.
func (dc *pgDriverConn) queryAfterPending(ctx context.Context, sd *pgconn.StatementDescription, args []driver.NamedValue) (driver.Rows, error) {
	vals, formats, err := dc.params(sd, args)
	if err != nil {
		return nil, err
	}
	dc.closeRun()
	dc.pend.b.ExecStatement(sd, vals, formats, nil)
	return dc.readQueries(ctx, []*pgconn.StatementDescription{sd})
}
