package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5/pgconn"
)

// A database/sql driver on pgx's wire-protocol layer (pgconn) alone. pgx's
// own stdlib driver builds pgx's whole type system (every PostgreSQL type,
// generic codecs for each): 4.4 MB of the stripped binary, over twice this
// engine's share of the size budget. The store needs little of it: its
// columns are text, bigint, double precision and bytea, so parameters go as
// text (bytea as binary) and results come back as text, converted here to
// the values database/sql scans from.

// OIDs of the types whose text form is converted; everything else is a string.
const (
	oidBool    = 16
	oidBytea   = 17
	oidInt8    = 20
	oidInt2    = 21
	oidInt4    = 23
	oidFloat4  = 700
	oidFloat8  = 701
	oidNumeric = 1700
)

// pgStmtCacheMax bounds a connection's prepared statements; the store's
// statements are constant texts, so the bound is only a guard.
var pgStmtCacheMax = 4096 // a variable for the tests

type pgDriverConnector struct{ cfg *pgconn.Config }

func (pc pgDriverConnector) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := pgconn.ConnectConfig(ctx, pc.cfg)
	if err != nil {
		return nil, err
	}
	return &pgDriverConn{c: c, stmts: map[string]*pgconn.StatementDescription{}}, nil
}

func (pc pgDriverConnector) Driver() driver.Driver { return pgDriver{} }

type pgDriver struct{}

func (pgDriver) Open(string) (driver.Conn, error) {
	return nil, errors.New("postgres: open through store.OpenPostgres")
}

// pgDriverConn is one server session. database/sql never uses it from two
// goroutines at once.
type pgDriverConn struct {
	c     *pgconn.PgConn
	stmts map[string]*pgconn.StatementDescription // by PostgreSQL text
	n     int
	trips int                                          // round trips to the server (tests count them)
	inTx  bool                                         // between BeginTx and Commit/Rollback
	pend  *pgPending                                   // statements queued in the transaction (pgdriver_pipeline.go)
	spare *pgPending                                   // the last transaction's queue, kept for its buffers (pgdriver_batchbuf.go)
	coal  map[*pgconn.StatementDescription]*pgCoalesce // flush statements' coalescing (pgdriver_coalesce.go)
	// params' scratch, reused by every statement (see params).
	vals    [][]byte
	formats []int16
	num     []byte
}

// prepared returns the statement for q (in PostgreSQL's dialect), preparing
// it on this session the first time.
func (dc *pgDriverConn) prepared(ctx context.Context, q string) (*pgconn.StatementDescription, error) {
	if sd, ok := dc.stmts[q]; ok {
		return sd, nil
	}
	// Not while statements are queued: they name prepared statements, which
	// must outlive the queue (it goes with a later statement or COMMIT).
	if len(dc.stmts) >= pgStmtCacheMax && dc.pend == nil {
		for k, sd := range dc.stmts {
			dc.trips++
			_ = dc.c.Deallocate(ctx, sd.Name)
			delete(dc.stmts, k)
		}
		dc.coal = nil // its unnest statements are gone too
	}
	dc.n++
	dc.trips++
	sd, err := dc.c.Prepare(ctx, "oa"+strconv.Itoa(dc.n), q, nil)
	if err != nil {
		return nil, dc.fail(err, q)
	}
	dc.stmts[q] = sd
	return sd, nil
}

// fail maps an error: a broken connection that sent nothing is ErrBadConn
// (database/sql retries on another), a syntax or type error names its
// statement (a dialect difference the rewrite missed).
func (dc *pgDriverConn) fail(err error, q string) error {
	if err == nil {
		return nil
	}
	if pgconn.SafeToRetry(err) {
		return driver.ErrBadConn
	}
	return withStatement(err, q)
}

func (dc *pgDriverConn) Prepare(query string) (driver.Stmt, error) {
	return dc.PrepareContext(context.Background(), query)
}

func (dc *pgDriverConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if dc.c.IsClosed() {
		return nil, driver.ErrBadConn
	}
	sd, err := dc.prepared(ctx, pgSQL(query))
	if err != nil {
		return nil, err
	}
	return &pgStmt{dc: dc, sd: sd, deferrable: pgDeferrable[query]}, nil
}

func (dc *pgDriverConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if dc.c.IsClosed() {
		return nil, driver.ErrBadConn
	}
	q := pgSQL(query)
	if len(args) == 0 && !strings.Contains(q, "$1") {
		if err := dc.flushPending(ctx); err != nil {
			return nil, err
		}
		// The simple protocol: a migration is several statements.
		dc.trips++
		res, err := dc.c.Exec(ctx, q).ReadAll()
		if err != nil {
			return nil, dc.fail(err, q)
		}
		var n int64
		for _, r := range res {
			if r.Err != nil {
				return nil, dc.fail(r.Err, q)
			}
			n += r.CommandTag.RowsAffected()
		}
		return driver.RowsAffected(n), nil
	}
	sd, err := dc.prepared(ctx, q)
	if err != nil {
		return nil, err
	}
	if dc.inTx && pgDeferrable[query] {
		return dc.deferExec(ctx, sd, args)
	}
	return dc.exec(ctx, sd, args)
}

func (dc *pgDriverConn) exec(ctx context.Context, sd *pgconn.StatementDescription, args []driver.NamedValue) (driver.Result, error) {
	if dc.pend != nil {
		return dc.execAfterPending(ctx, sd, args)
	}
	vals, formats, err := dc.params(sd, args)
	if err != nil {
		return nil, err
	}
	dc.trips++
	tag, err := dc.c.ExecStatement(ctx, sd, vals, formats, nil).Close()
	if err != nil {
		return nil, dc.fail(err, sd.SQL)
	}
	return driver.RowsAffected(tag.RowsAffected()), nil
}

func (dc *pgDriverConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if dc.c.IsClosed() {
		return nil, driver.ErrBadConn
	}
	if strings.HasPrefix(query, pgPipelineSep) {
		return dc.queryPipelined(ctx, query, args)
	}
	sd, err := dc.prepared(ctx, pgSQL(query))
	if err != nil {
		return nil, err
	}
	return dc.query(ctx, sd, args)
}

func (dc *pgDriverConn) query(ctx context.Context, sd *pgconn.StatementDescription, args []driver.NamedValue) (driver.Rows, error) {
	if dc.pend != nil {
		return dc.queryAfterPending(ctx, sd, args)
	}
	vals, formats, err := dc.params(sd, args)
	if err != nil {
		return nil, err
	}
	dc.trips++
	rr := dc.c.ExecStatement(ctx, sd, vals, formats, nil)
	// The first row is read now, so an error of the statement is the
	// query's error rather than a rows.Err a caller might not look at.
	more := rr.NextRow()
	if !more {
		if _, err := rr.Close(); err != nil {
			return nil, dc.fail(err, sd.SQL)
		}
	}
	return &pgRows{rr: rr, sd: sd, preloaded: more, done: !more}, nil
}

// params encodes database/sql's values (already converted to int64,
// float64, bool, []byte, string, time.Time or nil) in text, and bytes in
// binary, which is the raw bytes for bytea and text alike.
//
// The slices it returns are the connection's scratch, valid until its next
// call, and a string's bytes are the string's own memory, not a copy: every
// caller hands them to pgconn, which encodes the Bind message into its
// buffer at once (ExecStatement, Batch.ExecStatement) and neither keeps nor
// writes them. Copying each event's body and headers, and two slices per
// statement, was 6 % of the server's CPU in the PostgreSQL ingest bench.
func (dc *pgDriverConn) params(sd *pgconn.StatementDescription, args []driver.NamedValue) ([][]byte, []int16, error) {
	if len(args) != len(sd.ParamOIDs) {
		return nil, nil, fmt.Errorf("postgres: %d arguments for %d parameters", len(args), len(sd.ParamOIDs))
	}
	if cap(dc.vals) < len(args) {
		dc.vals, dc.formats = make([][]byte, len(args)), make([]int16, len(args))
	}
	vals, formats := dc.vals[:len(args)], dc.formats[:len(args)]
	clear(vals)
	clear(formats)
	// Numbers' text goes into one buffer: a value is a capped sub-slice, so
	// later appends never write over it (and one that grows the buffer
	// leaves the earlier values in the old array).
	num := dc.num[:0]
	for i, a := range args {
		switch v := a.Value.(type) {
		case nil:
		case int64:
			n := len(num)
			num = strconv.AppendInt(num, v, 10)
			vals[i] = num[n:len(num):len(num)]
		case float64:
			n := len(num)
			num = strconv.AppendFloat(num, v, 'g', -1, 64)
			vals[i] = num[n:len(num):len(num)]
		case bool:
			// Flags are 0/1 integers, as on SQLite.
			if v {
				vals[i] = pgTrue
			} else {
				vals[i] = pgFalse
			}
		case string:
			vals[i] = unsafe.Slice(unsafe.StringData(v), len(v)) // read only (above)
			if vals[i] == nil {
				vals[i] = pgEmpty // "", not NULL
			}
			if sd.ParamOIDs[i] == oidBytea {
				formats[i] = 1
			}
		case []byte:
			if v == nil {
				continue
			}
			vals[i] = v
			formats[i] = 1
			if sd.ParamOIDs[i] != oidBytea && sd.ParamOIDs[i] != 25 && sd.ParamOIDs[i] != 1043 {
				formats[i] = 0 // as its text, e.g. a number kept in bytes
			}
		case time.Time:
			vals[i] = v.UTC().AppendFormat(nil, time.RFC3339Nano)
		default:
			return nil, nil, fmt.Errorf("postgres: unsupported argument type %T", a.Value)
		}
	}
	dc.num = num
	return vals, formats, nil
}

var (
	pgTrue  = []byte("1")
	pgFalse = []byte("0")
	pgEmpty = []byte{}
)

type pgStmt struct {
	dc         *pgDriverConn
	sd         *pgconn.StatementDescription
	deferrable bool // pgDeferrable: queued inside a transaction
}

// Close keeps the statement: the session's cache owns it.
func (s *pgStmt) Close() error  { return nil }
func (s *pgStmt) NumInput() int { return len(s.sd.ParamOIDs) }

func (s *pgStmt) Exec([]driver.Value) (driver.Result, error) {
	return nil, errors.New("postgres: Exec without context")
}

func (s *pgStmt) Query([]driver.Value) (driver.Rows, error) {
	return nil, errors.New("postgres: Query without context")
}

func (s *pgStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if s.deferrable && s.dc.inTx {
		return s.dc.deferExec(ctx, s.sd, args)
	}
	return s.dc.exec(ctx, s.sd, args)
}

func (s *pgStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.dc.query(ctx, s.sd, args)
}

func (dc *pgDriverConn) Begin() (driver.Tx, error) {
	return dc.BeginTx(context.Background(), driver.TxOptions{})
}

func (dc *pgDriverConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if dc.c.IsClosed() {
		return nil, driver.ErrBadConn
	}
	q := "BEGIN"
	switch opts.Isolation {
	case driver.IsolationLevel(0):
	case driver.IsolationLevel(6): // sql.LevelSerializable
		q += " ISOLATION LEVEL SERIALIZABLE"
	case driver.IsolationLevel(4): // sql.LevelRepeatableRead
		q += " ISOLATION LEVEL REPEATABLE READ"
	case driver.IsolationLevel(2): // sql.LevelReadCommitted
		q += " ISOLATION LEVEL READ COMMITTED"
	default:
		return nil, fmt.Errorf("postgres: isolation level %d", opts.Isolation)
	}
	if opts.ReadOnly {
		q += " READ ONLY"
	}
	// BEGIN is queued, not sent: it goes with the transaction's first
	// statement (pgdriver_pipeline.go), one round trip fewer per
	// transaction. A connection found broken then fails that statement with
	// driver.ErrBadConn, which Write retries (pgRetryable).
	dc.inTx, dc.pend = true, dc.newPending()
	dc.pend.b.ExecParams(q, nil, nil, nil, nil)
	dc.pend.sql = append(dc.pend.sql, q)
	dc.pend.begin = true
	return pgTx{dc: dc}, nil
}

type pgTx struct{ dc *pgDriverConn }

func (t pgTx) Commit() error {
	t.dc.inTx = false
	if p := t.dc.pend; p != nil && p.begin && len(p.sql) == 1 {
		t.dc.pend = nil // nothing ran: the server never saw the transaction
		t.dc.recycle(p)
		return nil
	}
	if t.dc.pend != nil {
		return t.dc.commitPending()
	}
	t.dc.trips++
	res, err := t.dc.c.Exec(context.Background(), "COMMIT").ReadAll()
	if err != nil {
		return err
	}
	// A transaction that failed earlier answers COMMIT with ROLLBACK.
	if len(res) == 1 && res[0].CommandTag.String() == "ROLLBACK" {
		return errors.New("postgres: transaction rolled back at commit")
	}
	return nil
}

func (t pgTx) Rollback() error {
	t.dc.recycle(t.dc.pend)
	t.dc.inTx, t.dc.pend = false, nil // queued statements (BEGIN too) are dropped unsent
	// 'I': the server is outside a transaction (BEGIN was never sent).
	if t.dc.c.IsClosed() || t.dc.c.TxStatus() == 'I' {
		return nil
	}
	t.dc.trips++
	_, err := t.dc.c.Exec(context.Background(), "ROLLBACK").ReadAll()
	return err
}

func (dc *pgDriverConn) Ping(ctx context.Context) error {
	if dc.c.IsClosed() {
		return driver.ErrBadConn
	}
	dc.trips++
	if err := dc.c.Ping(ctx); err != nil {
		return driver.ErrBadConn
	}
	return nil
}

// ResetSession drops a session left inside a transaction.
func (dc *pgDriverConn) ResetSession(context.Context) error {
	if dc.c.IsClosed() || dc.c.TxStatus() != 'I' {
		return driver.ErrBadConn
	}
	return nil
}

func (dc *pgDriverConn) IsValid() bool { return !dc.c.IsClosed() }

func (dc *pgDriverConn) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return dc.c.Close(ctx)
}
