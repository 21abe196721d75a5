package store

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
)

// Read caches for the hottest reads (the principal of every authenticated
// request, /me's user, the project of every project route, a page of
// tasks). They are correct because every row change made on this process's
// one writer connection is seen by SQLite's pre-update hook, which marks
// the table's group; the group's generation is bumped when the write
// transaction ends (after its commit), and a cached value is served only
// while the generations it was read under are unchanged:
//
//   - a reader takes the stamp BEFORE it reads the database, so a commit it
//     did not see bumps the generation after the stamp and the value it
//     stores is never served;
//   - the bump happens before the writing request answers, so a write
//     followed by a read shows the write; between the first row change and
//     the bump, the caches of the touched groups miss (see txEnded).
//
// On PostgreSQL (several servers may write) the caches are off: another
// node's writes are invisible here. Entries also expire after cacheTTL, a
// bound on any staleness from a writer outside this process (the CLI
// commands that write do so through the server's API).

// Gen is a group of tables whose changes invalidate the same caches.
type Gen uint8

const (
	// GenAuth: users, login sessions, org memberships, MFA methods.
	GenAuth Gen = iota
	// GenProjects: projects and project memberships.
	GenProjects
	// GenTasks: tasks (their list columns, run status included).
	GenTasks
	nGens
)

// genTables maps the tables the caches read to their group. SQLite's
// pre-update hook does not fire for WITHOUT ROWID tables, so none of these
// may be one (TestReadCacheTablesHaveRowids).
var genTables = map[string]Gen{
	"users": GenAuth, "auth_sessions": GenAuth, "org_members": GenAuth, "mfa_methods": GenAuth, "mfa_backup_codes": GenAuth,
	"projects": GenProjects, "project_members": GenProjects,
	"tasks": GenTasks,
}

const cacheTTL = 30 * time.Second

// tableGens is the per-DB change tracking behind the caches.
type tableGens struct {
	hooked  atomic.Pointer[any] // the writer driver connection that carries the hook
	pending atomic.Uint32       // groups touched by the open write transaction
	gens    [nGens]atomic.Uint64
}

// onRowChange is SQLite's pre-update hook on the writer connection.
func (t *tableGens) onRowChange(d sqlite.SQLitePreUpdateData) {
	if g, ok := genTables[d.TableName]; ok {
		t.pending.Or(1 << g)
	}
}

// txEnded bumps the groups the transaction touched. It runs after every
// write transaction, committed or not (a failed commit may still have
// written; a rollback makes a spurious bump, which costs a refill). The
// pending bits are cleared only after the bump, and Get misses while a
// group's bit is set: from the first row change until the bump, reads go to
// the database, so no moment exists where the database shows a commit that
// a cache hit does not. (One write transaction at a time: the writer
// connection is released after this runs.)
func (t *tableGens) txEnded() {
	if p := t.pending.Load(); p != 0 {
		for g := Gen(0); g < nGens; g++ {
			if p&(1<<g) != 0 {
				t.gens[g].Add(1)
			}
		}
		t.pending.Store(0)
	}
}

// hookWriter makes sure conn, the writer connection a transaction is about
// to use, reports its row changes (database/sql may have replaced the
// connection after an error). A driver without hooks leaves the caches off.
func (db *DB) hookWriter(conn *sql.Conn) {
	_ = conn.Raw(func(dc any) error {
		if p := db.tg.hooked.Load(); p != nil && *p == dc {
			return nil
		}
		hr, ok := dc.(sqlite.HookRegisterer)
		if !ok {
			return nil
		}
		hr.RegisterPreUpdateHook(db.tg.onRowChange)
		db.tg.hooked.Store(&dc)
		return nil
	})
}

// cacheable reports whether the read caches may be used.
func (db *DB) cacheable() bool { return !db.pg && db.tg.hooked.Load() != nil }

// stamp is the sum of the generations of groups (each only grows, so the sum
// is unchanged exactly when none of them changed).
func (db *DB) stamp(groups []Gen) uint64 {
	var s uint64
	for _, g := range groups {
		s += db.tg.gens[g].Load()
	}
	return s
}

// Cache is a bounded read-through cache of values derived from the groups'
// tables; see the top of this file. Safe for concurrent use.
type Cache[V any] struct {
	db     *DB
	groups []Gen
	mask   uint32 // the groups as pending bits
	max    int
	mu     sync.RWMutex
	m      map[string]cacheEntry[V]
}

type cacheEntry[V any] struct {
	v     V
	stamp uint64
	until time.Time
}

// NewCache returns a cache of at most max entries whose values derive from
// the tables of groups only; on PostgreSQL it returns nil, which always misses.
func NewCache[V any](db *DB, max int, groups ...Gen) *Cache[V] {
	if db.pg {
		return nil
	}
	var mask uint32
	for _, g := range groups {
		mask |= 1 << g
	}
	return &Cache[V]{db: db, groups: groups, mask: mask, max: max, m: map[string]cacheEntry[V]{}}
}

// Stamp is taken before reading what will be Put; ok is false when caching
// is off (PostgreSQL), and then Get always misses.
func (c *Cache[V]) Stamp() (stamp uint64, ok bool) {
	if c == nil || !c.db.cacheable() {
		return 0, false
	}
	return c.db.stamp(c.groups), true
}

// Get returns key's value if its tables did not change since it was read.
func (c *Cache[V]) Get(key string) (V, bool) {
	var zero V
	if c == nil || !c.db.cacheable() {
		return zero, false
	}
	if c.db.tg.pending.Load()&c.mask != 0 {
		return zero, false // a write to these tables is under way (see txEnded)
	}
	c.mu.RLock()
	e, ok := c.m[key]
	c.mu.RUnlock()
	if !ok || e.stamp != c.db.stamp(c.groups) || time.Now().After(e.until) {
		return zero, false
	}
	return e.v, true
}

// Put stores v, read after Stamp returned stamp.
func (c *Cache[V]) Put(key string, stamp uint64, v V) {
	if c == nil || stamp != c.db.stamp(c.groups) {
		return // already stale
	}
	c.mu.Lock()
	if len(c.m) >= c.max {
		// Bounded simply: a full cache starts over (entries refill on use).
		clear(c.m)
	}
	c.m[key] = cacheEntry[V]{v: v, stamp: stamp, until: time.Now().Add(cacheTTL)}
	c.mu.Unlock()
}

// cached runs read through c under key.
func cached[V any](ctx context.Context, c *Cache[V], key string, read func(context.Context) (V, error)) (V, error) {
	if v, ok := c.Get(key); ok {
		return v, nil
	}
	stamp, ok := c.Stamp()
	v, err := read(ctx)
	if err == nil && ok {
		c.Put(key, stamp, v)
	}
	return v, err
}

// The store's own caches (sizes: entries, each well under a kilobyte).
type userMFA struct {
	u   User
	mfa bool
}

type visibleProject struct {
	p    Project
	role string
}

func (db *DB) initCaches() {
	db.principals = NewCache[Principal](db, 8192, GenAuth)
	db.mfaUsers = NewCache[userMFA](db, 4096, GenAuth)
	db.projects = NewCache[visibleProject](db, 4096, GenProjects, GenAuth)
}
