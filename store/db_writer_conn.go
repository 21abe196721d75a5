package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"time"

	"modernc.org/sqlite"
)

// The group commit's multi-row INSERTs bind tens of values per row, and
// database/sql costs something for each on top of the driver: it converts
// every argument (a type switch, reflection for anything not a driver
// value), copies them into a new []driver.NamedValue per statement (tens of
// KB for 64 rows) and locks around the driver's call. On SQLite the writer
// connection is wrapped (writerConn) so that the ingest's statements run
// on the driver directly, prepared once per connection, with the
// arguments' slice reused: the same driver calls database/sql would make,
// in the same transaction (the writer's one connection, inside its BEGIN),
// with the values database/sql would hand the driver.

// sqliteConn is what the driver's connection implements and the writer
// uses: database/sql's optional interfaces and the hooks of the read
// caches (readcache.go).
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
	sqlite.HookRegisterer
}

// writerConnector opens the writer's connections wrapped in writerConn.
type writerConnector struct{ driver.Connector }

func (c writerConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := dc.(sqliteConn)
	if !ok {
		return dc, nil // statements go through database/sql (Tx.execDirect says so)
	}
	return &writerConn{sqliteConn: sc, stmts: map[string]driver.StmtExecContext{}}, nil
}

// maxDirectStmts bounds writerConn's statements: the ingest runs about a
// hundred constant texts and at most maxSharedForms shared forms.
const maxDirectStmts = 384

// writerConn is the writer's driver connection with the statements
// execDirect prepared on it; they are closed with it, before the driver
// closes the connection (database/sql closes a connection it replaces, or
// on DB.Close, with Close).
type writerConn struct {
	sqliteConn
	stmts map[string]driver.StmtExecContext
	args  []driver.NamedValue // reused by exec
}

func (c *writerConn) Close() error {
	for q, st := range c.stmts {
		_ = st.(driver.Stmt).Close()
		delete(c.stmts, q)
	}
	return c.sqliteConn.Close()
}

// exec runs q with args as database/sql's ExecContext would; ok false when
// an argument is not one database/sql hands the driver unchanged (or an
// int, which it converts to int64), or the statement cache is full: the
// caller then runs it through database/sql.
func (c *writerConn) exec(ctx context.Context, q string, args []any) (res driver.Result, ok bool, err error) {
	st := c.stmts[q]
	if st == nil {
		if len(c.stmts) >= maxDirectStmts {
			return nil, false, nil
		}
		ds, err := c.PrepareContext(ctx, q)
		if err != nil {
			return nil, true, err
		}
		se, isExec := ds.(driver.StmtExecContext)
		if !isExec {
			_ = ds.Close()
			return nil, false, nil
		}
		c.stmts[q], st = se, se
	}
	for len(c.args) < len(args) {
		c.args = append(c.args, driver.NamedValue{Ordinal: len(c.args) + 1})
	}
	nv := c.args[:len(args)]
	// The rows' values are not kept alive until the next batch.
	defer func() {
		for i := range nv {
			nv[i].Value = nil
		}
	}()
	for i, a := range args {
		switch v := a.(type) {
		case string, nil, int64, []byte, bool, float64, time.Time:
		case int:
			a = int64(v)
		default:
			return nil, false, nil
		}
		nv[i].Value = a
	}
	res, err = st.ExecContext(ctx, nv)
	return res, true, err
}

// execDirect runs q in tx on the writer's driver connection (writerConn);
// ok false when it cannot (PostgreSQL, an unwrapped connection, an
// argument exec does not take): the caller uses database/sql.
func (tx *Tx) execDirect(ctx context.Context, q string, args []any) (res sql.Result, ok bool, err error) {
	if tx.conn == nil {
		return nil, false, nil
	}
	// Raw holds the connection's lock as database/sql does around a call.
	err = tx.conn.Raw(func(dc any) error {
		wc, isWriter := dc.(*writerConn)
		if !isWriter {
			return nil
		}
		var r driver.Result
		var e error
		r, ok, e = wc.exec(ctx, q, args)
		if r != nil {
			res = r
		}
		return e
	})
	return res, ok, err
}
