package store

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
)

// Statements are prepared once per session, and after five executions
// PostgreSQL may settle on a generic plan, costed on the tables as they were
// then. It keeps that plan until the table's statistics change (autovacuum's
// ANALYZE, up to a minute and 10 % of the rows later). A plan made while a
// table was small stays after it grew a hundredfold: on a fresh database
// under an alert storm the correlation-key lookup read every key of the
// project (a bitmap scan on project_id, the keys only a filter) and the
// scheduler's run read scanned task_runs whole, milliseconds a call and
// growing with the tables (auto_explain, session 6). So a statement is
// prepared again, under the same name, each time its uses on the session
// double: the plan is then never costed on tables much smaller than they
// are (the tables grow with the uses), at a Close and a Parse per doubling.

// replanFirst is the first use count at which a statement is prepared anew;
// replanLast the last (by then autovacuum keeps the statistics current).
const (
	replanFirst = 64
	replanLast  = 1 << 20
)

// pgCached is a prepared statement of the session and its use count.
type pgCached struct {
	sd       *pgconn.StatementDescription
	uses     int
	replanAt int // the use count at which it is prepared again; 0: never
}

// replanIfDue counts a use of c and, at each doubling, prepares it again
// under its name: Close and Parse go ahead of any queued statement of the
// transaction (pgdriver_pipeline.go), which then runs the new one. Not in
// a failed transaction (the Parse would fail; the statement is not run
// there either). When the Close fails the old plan stays; when the Parse
// fails the statement leaves the cache and the error is the statement's.
func (dc *pgDriverConn) replanIfDue(ctx context.Context, c *pgCached) error {
	c.uses++
	if c.replanAt == 0 || c.uses < c.replanAt || dc.c.TxStatus() == 'E' {
		return nil
	}
	c.replanAt *= 2
	if c.replanAt > replanLast {
		c.replanAt = 0
	}
	if err := dc.c.Deallocate(ctx, c.sd.Name); err != nil {
		return nil // the old plan stays (a broken connection fails the statement next)
	}
	if _, err := dc.c.Prepare(ctx, c.sd.Name, c.sd.SQL, nil); err != nil {
		delete(dc.stmts, c.sd.SQL)
		return dc.fail(err, c.sd.SQL)
	}
	return nil
}
