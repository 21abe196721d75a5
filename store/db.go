// Package store keeps the tenancy data in SQLite: one writer connection, a
// pool of readers, forward-only embedded migrations, one transaction per
// public method. Nothing here imports another package of the project.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// DB is the handle to the product database.
type DB struct {
	// w: exactly one connection: SQLite has one writer anyway, and this keeps
	// BUSY away. Every write transaction goes through writeOnce, which is
	// where the read caches learn what changed (readcache.go): a new write
	// path must too.
	w    *sql.DB
	r    *sql.DB // readers, WAL lets them run beside the writer
	Path string
	// Now is the clock every transaction stamps its rows with; tests replace it.
	Now func() time.Time
	// retries counts transactions Write ran again (write_retry.go).
	retries retryCounters
	// stmts caches prepared read statements by query text: modernc's driver
	// parses and plans a query on every call otherwise, which was a fifth of
	// the CPU of an authenticated request.
	stmts sync.Map // string -> *sql.Stmt
	// wstmts: statements of hot write paths prepared once on the writer
	// connection (see writerStmts); a transaction binds them with StmtContext.
	wstmts sync.Map // string -> *sql.Stmt

	// PostgreSQL (engine.go): the pool that holds advisory locks, and the
	// isolation of write transactions; nil on SQLite.
	pg     bool
	locks  *sql.DB
	txOpts *sql.TxOptions
	runs   runLocks // the locks of the agent runs this server holds (cluster_runs.go)
	// gate is the billing quota check creates run in their transaction (nil: billing off).
	gate atomic.Pointer[QuotaGate]
	// accounts caches billing accounts read inside write transactions (see
	// BillingAccountTx); UpdateBillingAccount drops an org's entry in its own.
	accounts sync.Map // org id -> BillingAccount
	// countBounds holds upper bounds of trigger-kept quota counts (see
	// CountedOver in billing_bounds.go): org id + kind -> *int64, used
	// under boundsMu.
	countBounds sync.Map
	boundsMu    sync.Mutex
	// monthCounts holds the exact monthly counters of monthPeriod on SQLite
	// (BumpMonthlyWithin in billing_monthly.go), used under boundsMu.
	monthCounts map[string]int64
	monthPeriod string
	// ckpt checkpoints the WAL off the writer's path (checkpoint.go); nil on PostgreSQL.
	ckpt *checkpointer
	// nstmts counts the list statements readRows added to stmts (bounded).
	nstmts atomic.Int64
	// nhot counts the statements writeHot prepared (bounded).
	nhot atomic.Int64
	// dedupeMem is the webhook dedupe window on SQLite (webhook_dedupe_memory.go).
	dedupeInit sync.Once
	dedupeMem  *dedupeMemory
	// keyMem holds open incidents' main keys on SQLite (webhook_key_memory.go).
	keyMemInit sync.Once
	keyMem     *keyMemory
	// refreshGC group-commits refresh rotations (RefreshAuthSession).
	refreshInit sync.Once
	refreshGC   *groupCommit[RefreshAttempt, RefreshResult]
	// finishGC group-commits run ends (FinishTaskRun, taskrun_group.go).
	finishInit sync.Once
	finishGC   *groupCommit[runFinish, struct{}]
	// runHolds: orgs whose webhook runs wait (no model configured; webhook_run_hold.go).
	runHolds runHolds
	// analyzeStop ends the PostgreSQL statistics keeper (pg_analyze.go);
	// analyzeKick wakes it when the ingest has stored its first
	// pgAnalyzeMinRows events since the open (ingested counts them).
	analyzeStop func()
	analyzeKick chan struct{}
	ingested    atomic.Int64
	// tg tracks which tables the writer changed, for the read caches
	// (readcache.go); the caches themselves follow.
	tg         tableGens
	principals *Cache[Principal]
	mfaUsers   *Cache[userMFA]
	projects   *Cache[visibleProject]
}

// Querier is what read helpers need; both *sql.DB and *sql.Tx satisfy it.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Open opens (creating if needed) the database at path and migrates it.
// It refuses a database whose schema is newer than this binary.
func Open(ctx context.Context, path string) (*DB, error) {
	pragmas := []string{
		"journal_mode(WAL)",
		"busy_timeout(10000)",
		"foreign_keys(1)",
		// FULL: an acknowledged write survives power loss, which the API promises.
		"synchronous(FULL)",
		"temp_store(MEMORY)",
		"cache_size(-16000)",
	}
	// Create the file ourselves so it is private: SQLite would use 0644, and
	// gives the -wal and -shm files the mode of the database file.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	f.Close()
	if err := formatNew(ctx, path); err != nil {
		return nil, err
	}
	q := url.Values{}
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	// A new database frees pages incrementally (retention runs
	// PRAGMA incremental_vacuum after deleting); on an existing one this
	// changes nothing until a one-off VACUUM (deploy/README.md).
	q.Add("_pragma", "auto_vacuum(INCREMENTAL)")
	q.Set("_txlock", "immediate")
	for _, p := range writerPragmas {
		q.Add("_pragma", p)
	}
	q.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", walLimit))
	dsn := "file:" + path + "?" + q.Encode()
	wc, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	w := sql.OpenDB(writerConnector{wc}) // db_writer_conn.go
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	rq := url.Values{}
	for _, p := range pragmas {
		rq.Add("_pragma", p)
	}
	rq.Add("_pragma", "query_only(1)")
	r, err := sql.Open("sqlite", "file:"+path+"?"+rq.Encode())
	if err != nil {
		w.Close()
		return nil, err
	}
	n := max(4, runtime.NumCPU()*2)
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	db := &DB{w: w, r: r, Path: path, Now: func() time.Time { return time.Now().UTC() }}
	if err := w.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if db.ckpt, err = startCheckpointer(path, pragmas); err != nil {
		db.Close()
		return nil, err
	}
	db.initCaches()
	// Hook the writer now, so the caches work before the first write.
	if conn, err := w.Conn(ctx); err == nil {
		db.hookWriter(conn)
		conn.Close()
	}
	return db, nil
}

// Close closes both pools.
func (db *DB) Close() error {
	db.stmts.Range(func(_, v any) bool { v.(*sql.Stmt).Close(); return true })
	db.wstmts.Range(func(_, v any) bool { v.(*sql.Stmt).Close(); return true })
	if db.analyzeStop != nil {
		db.analyzeStop()
	}
	if db.locks != nil {
		db.closeRuns()
		db.locks.Close()
	}
	if db.ckpt != nil {
		db.ckpt.close()
	}
	if db.dedupeMem != nil {
		db.dedupeMem.close()
	}
	if db.keyMem != nil {
		db.keyMem.close()
	}
	return errors.Join(db.r.Close(), db.w.Close())
}

// readRow runs a hot read query on the reader pool through a prepared
// statement cached by its text. Only constant query strings belong here (the
// cache is never pruned); one-off queries use db.r directly.
//
// The query runs detached from ctx's cancellation (values kept): a point read
// by key takes microseconds, while a cancellable context costs two goroutines
// per query (database/sql's and the driver's watchers), a tenth of the CPU of
// an authenticated request. An already-ended ctx still stops it here.
func (db *DB) readRow(ctx context.Context, query string, args ...any) *sql.Row {
	if ctx.Err() != nil {
		return db.r.QueryRowContext(ctx, query, args...) // carries ctx's error to Scan
	}
	ctx = context.WithoutCancel(ctx)
	if st, ok := db.stmts.Load(query); ok {
		return st.(*sql.Stmt).QueryRowContext(ctx, args...)
	}
	st, err := db.r.PrepareContext(ctx, query)
	if err != nil {
		return db.r.QueryRowContext(ctx, query, args...) // carries the same error to Scan
	}
	if prev, loaded := db.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		st = prev.(*sql.Stmt)
	}
	return st.QueryRowContext(ctx, args...)
}

// writerStmts returns the queries prepared once on the writer connection,
// preparing those not yet prepared. Call it OUTSIDE a write transaction:
// preparing needs the one writer connection. Only constant query strings.
func (db *DB) writerStmts(ctx context.Context, queries ...string) (map[string]*sql.Stmt, error) {
	out := make(map[string]*sql.Stmt, len(queries))
	for _, q := range queries {
		if st, ok := db.wstmts.Load(q); ok {
			out[q] = st.(*sql.Stmt)
			continue
		}
		st, err := db.w.PrepareContext(ctx, q)
		if err != nil {
			return nil, err
		}
		if prev, loaded := db.wstmts.LoadOrStore(q, st); loaded {
			st.Close()
			st = prev.(*sql.Stmt)
		}
		out[q] = st
	}
	return out, nil
}

// Reader returns the read pool for queries that need no transaction.
func (db *DB) Reader() *sql.DB { return db.r }

// Tx is one write transaction; Now is fixed for its whole life so every row it
// writes carries the same time.
type Tx struct {
	*sql.Tx
	Now  time.Time
	gate QuotaGate // see CheckQuota
	db   *DB
	// accounts caches billing accounts the gate read in this transaction
	// (a group commit of webhook events asks once per org, not per event).
	accounts map[string]BillingAccount
	// hot: statements of this transaction run prepared (see txprepared.go).
	hot *hotStmts
	// conn: the writer connection holding the transaction on SQLite
	// (execDirect), nil on PostgreSQL.
	conn *sql.Conn
	// updating: this transaction writes a billing account, so what it reads
	// must not reach the shared cache (it may still roll back).
	updating bool
	// beforeCommit runs after fn succeeded, inside the transaction; an
	// error rolls it back.
	beforeCommit []func() error
	// onCommit runs after the transaction committed (not after a rollback).
	onCommit []func()
	// monthPending: the monthly counter increments of this transaction,
	// written once per counter before it commits (billing_monthly.go).
	monthPending map[string]*monthBump
	// boundsLocked: this transaction holds db.boundsMu until its end.
	boundsLocked bool
}

// Write runs fn in one IMMEDIATE transaction on the writer connection,
// running it again (write_retry.go) when it lost a race: the SQLite file
// busy, a PostgreSQL serialization failure or deadlock. fn may therefore run
// more than once and must not keep state between runs.
func (db *DB) Write(ctx context.Context, fn func(tx *Tx) error) error {
	return db.writeRetrying(ctx, fn)
}

func (db *DB) writeOnce(ctx context.Context, fn func(tx *Tx) error) error {
	var stx *sql.Tx
	var conn *sql.Conn // SQLite's writer connection
	var err error
	if db.pg {
		stx, err = db.w.BeginTx(ctx, db.txOpts)
	} else {
		// The writer connection is taken explicitly so that its row changes
		// are known to reach the read caches' hook (readcache.go).
		conn, err = db.w.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		if db.ckpt != nil {
			db.ckpt.bound() // holding the writer: no write starts meanwhile
		}
		db.hookWriter(conn)
		defer db.tg.txEnded()
		stx, err = conn.BeginTx(ctx, db.txOpts)
	}
	if err != nil {
		return err
	}
	tx := &Tx{Tx: stx, Now: db.Now().UTC(), db: db, conn: conn}
	if g := db.gate.Load(); g != nil {
		tx.gate = *g
	}
	defer func() {
		if tx.boundsLocked {
			db.boundsMu.Unlock()
		}
	}()
	if err := fn(tx); err != nil {
		_ = stx.Rollback()
		return err
	}
	for _, f := range tx.beforeCommit {
		if err := f(); err != nil {
			_ = stx.Rollback()
			return err
		}
	}
	if err := stx.Commit(); err != nil {
		return err
	}
	if db.ckpt != nil {
		db.ckpt.committed()
	}
	for _, f := range tx.onCommit {
		f()
	}
	return nil
}

func isBusy(err error) bool {
	if pgRetryable(err) {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code() & 0xff
		return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
	}
	return false
}

// isUnique reports a UNIQUE constraint violation.
func isUnique(err error) bool {
	if pgUnique(err) {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// ValidID reports whether s is a canonical uuid string.
func ValidID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}

// timeLayout is fixed-width so stored times sort as text.
const timeLayout = "2006-01-02T15:04:05.000000Z"

// TS formats t for storage.
func TS(t time.Time) string { return t.UTC().Format(timeLayout) }

// ParseTS reads a stored time; empty means zero.
func ParseTS(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	if t, ok := parseFixedTS(s); ok {
		return t
	}
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		t, _ = time.Parse(time.RFC3339Nano, s)
	}
	return t.UTC()
}

// parseFixedTS reads timeLayout's fixed positions directly: every list row
// carries two to four times, and time.Parse was a twentieth of the CPU of a
// page of tasks. Anything not in exactly that shape goes to time.Parse.
func parseFixedTS(s string) (time.Time, bool) {
	if len(s) != len(timeLayout) || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' ||
		s[19] != '.' || s[26] != 'Z' {
		return time.Time{}, false
	}
	num := func(i, j int) (int, bool) {
		n := 0
		for ; i < j; i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 7)
	d, ok3 := num(8, 10)
	h, ok4 := num(11, 13)
	mi, ok5 := num(14, 16)
	sec, ok6 := num(17, 19)
	us, ok7 := num(20, 26)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, us*1000, time.UTC)
	if t.Day() != d { // 31 February and the like: let time.Parse report it as it always has
		return time.Time{}, false
	}
	return t, true
}

func nullTS(t *time.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return TS(*t)
}

func scanNullTS(ns sql.NullString) *time.Time {
	if !ns.Valid || ns.String == "" {
		return nil
	}
	t := ParseTS(ns.String)
	return &t
}

// likeEscape escapes s for use in LIKE ... ESCAPE '\'.
func likeEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}
