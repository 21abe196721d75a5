package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"fmt"
	"hash/fnv"
	"io/fs"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Engine names the database engine behind a DB.
type Engine string

const (
	// EngineSQLite is the appliance: one file in the data directory.
	EngineSQLite Engine = "sqlite"
	// EnginePostgres is a cluster shared by any number of identical servers.
	EnginePostgres Engine = "postgres"
)

//go:embed migrations_pg/*.sql
var migrationPGFS embed.FS

// Engine reports which engine holds the state.
func (db *DB) Engine() Engine {
	if db.pg {
		return EnginePostgres
	}
	return EngineSQLite
}

// OpenURL opens the PostgreSQL database at databaseURL when it is set, and
// the appliance's SQLite file at path otherwise.
func OpenURL(ctx context.Context, path, databaseURL string) (*DB, error) {
	if databaseURL == "" {
		return Open(ctx, path)
	}
	return OpenPostgres(ctx, databaseURL)
}

// OpenPostgres opens the state on a PostgreSQL cluster and migrates it (one
// node at a time: the migration holds an advisory lock).
//
// Writes keep the appliance's shape: one writer connection per server, and
// every write transaction SERIALIZABLE, so a transaction sees the same
// "nothing else wrote meanwhile" that SQLite's single writer gives; a lost
// race with another node is retried like SQLite's busy file.
func OpenPostgres(ctx context.Context, databaseURL string) (*DB, error) {
	w, err := openPGPool(databaseURL, false, "opsagent")
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	r, err := openPGPool(databaseURL, true, "opsagent-read")
	if err != nil {
		w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(16)
	r.SetMaxIdleConns(16)
	r.SetConnMaxIdleTime(5 * time.Minute)
	locks, err := openPGPool(databaseURL, false, "opsagent-lock")
	if err != nil {
		w.Close()
		r.Close()
		return nil, err
	}
	locks.SetMaxIdleConns(2)
	db := &DB{w: w, r: r, locks: locks, pg: true, Now: func() time.Time { return time.Now().UTC() },
		txOpts: &sql.TxOptions{Isolation: sql.LevelSerializable}}
	if err := w.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	db.startPGAnalyzer()
	return db, nil
}

// migrationFiles lists the engine's migrations by name with their SQL. On
// PostgreSQL a migration that has no hand-written file in migrations_pg is
// the SQLite one translated mechanically (pgMigrationSQL), so a new SQLite
// migration works on both engines as soon as it lands; TestSchemasMatch
// proves the two schemas agree.
func (db *DB) migrationFiles() (map[string]string, error) {
	out := map[string]string{}
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		body, err := migrationFS.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		out[e.Name()] = string(body)
	}
	if !db.pg {
		return out, nil
	}
	for n, body := range out {
		out[n] = pgMigrationSQL(body)
	}
	entries, err = fs.ReadDir(migrationPGFS, "migrations_pg")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		body, err := migrationPGFS.ReadFile("migrations_pg/" + e.Name())
		if err != nil {
			return nil, err
		}
		out[e.Name()] = string(body)
	}
	return out, nil
}

var (
	sqliteInteger = regexp.MustCompile(`\bINTEGER\b`)
	sqliteReal    = regexp.MustCompile(`\bREAL\b`)
	sqliteBlob    = regexp.MustCompile(`\bBLOB\b`)
	withoutRowid  = regexp.MustCompile(`\)\s*WITHOUT ROWID\s*;`)
)

// pgMigrationSQL translates a SQLite migration's column types: SQLite's
// INTEGER is 64 bits, REAL a double, BLOB bytes.
func pgMigrationSQL(s string) string {
	s = sqliteInteger.ReplaceAllString(s, "BIGINT")
	s = sqliteReal.ReplaceAllString(s, "DOUBLE PRECISION")
	s = sqliteBlob.ReplaceAllString(s, "BYTEA")
	return withoutRowid.ReplaceAllString(s, ");")
}

// migrateLock keeps two servers starting together from migrating at once.
func (db *DB) migrateLock(ctx context.Context) (func(), error) {
	if !db.pg {
		return func() {}, nil
	}
	return db.AdvisoryLock(ctx, "opsagent:migrate")
}

// lockKey maps a lock's name to PostgreSQL's 64-bit advisory key.
func lockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int64(h.Sum64())
}

// AdvisoryLock waits for the cluster-wide lock name and returns its release.
// On SQLite (one server) it is a no-op.
func (db *DB) AdvisoryLock(ctx context.Context, name string) (func(), error) {
	if !db.pg {
		return func() {}, nil
	}
	c, err := db.locks.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := c.ExecContext(ctx, `SELECT pg_advisory_lock(?)`, lockKey(name)); err != nil {
		c.Close()
		return nil, err
	}
	return func() {
		_, _ = c.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(?)`, lockKey(name))
		c.Close()
	}, nil
}

// FreePages counts the SQLite file's free pages that an incremental vacuum
// can return to the file system. PostgreSQL's autovacuum does that itself: 0.
func (db *DB) FreePages(ctx context.Context) (int, error) {
	if db.pg {
		return 0, nil
	}
	var free int
	err := db.r.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free)
	return free, err
}

// lockAuditChains makes this server the only writer of the audit chains of
// the events' organizations until unlock. SQLite's one writer connection
// already is; servers of a PostgreSQL cluster take turns per organization
// (session advisory locks, in a fixed order so two batches cannot wait on
// each other). The locks are taken before the transaction starts, so its
// snapshot already holds the previous writer's events and the append never
// loses a serialization race.
func (db *DB) lockAuditChains(ctx context.Context, events []*AuditRecord) (func(), error) {
	if !db.pg {
		return func() {}, nil
	}
	var orgs []string
	seen := map[string]bool{}
	for _, e := range events {
		if !seen[e.OrgID] {
			seen[e.OrgID] = true
			orgs = append(orgs, e.OrgID)
		}
	}
	sort.Strings(orgs)
	c, err := db.locks.Conn(ctx)
	if err != nil {
		return nil, err
	}
	keys := make([]int64, 0, len(orgs))
	release := func() {
		bg := context.WithoutCancel(ctx)
		for _, k := range keys {
			if _, err := c.ExecContext(bg, `SELECT pg_advisory_unlock(?)`, k); err != nil {
				// Never pool a session that may still hold a lock.
				_ = c.Raw(func(any) error { return driver.ErrBadConn })
				break
			}
		}
		c.Close()
	}
	for _, o := range orgs {
		k := lockKey("opsagent:audit:" + o)
		if _, err := c.ExecContext(ctx, `SELECT pg_advisory_lock(?)`, k); err != nil {
			release()
			return nil, err
		}
		keys = append(keys, k)
	}
	return release, nil
}

// Shared reports whether other servers may use the same database (a
// PostgreSQL cluster): then a session's live turn may run on another server.
func (db *DB) Shared() bool { return db.pg }
