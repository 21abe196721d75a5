package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"log/slog"
	"sync/atomic"
	"time"
)

// Leader elects one server of a cluster for a role (the task scheduler's
// ticking) with a PostgreSQL session advisory lock: the lock lives as long
// as the connection holding it, so a node that dies (kill -9, lost network)
// releases it as soon as PostgreSQL sees its connection close, and another
// node takes it at its next try. On SQLite the one server always leads.
type Leader struct {
	db   *DB
	name string
	key  int64
	held atomic.Bool
	conn *sql.Conn
	log  *slog.Logger
}

// LeaderTry is how often a follower tries the lock and a leader proves it
// still holds its connection: failover takes about this long once
// PostgreSQL has dropped the dead leader's session.
const LeaderTry = 2 * time.Second

// NewLeader returns the election for role name; Run drives it.
func (db *DB) NewLeader(name string, log *slog.Logger) *Leader {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &Leader{db: db, name: name, key: lockKey("opsagent:leader:" + name), log: log}
	if !db.pg {
		l.held.Store(true)
	}
	return l
}

// IsLeader reports whether this server holds the role now.
func (l *Leader) IsLeader() bool { return l.held.Load() }

// Run tries for the role until ctx ends, then gives it up.
func (l *Leader) Run(ctx context.Context) {
	if !l.db.pg {
		return
	}
	defer l.release()
	t := time.NewTicker(LeaderTry)
	defer t.Stop()
	for {
		l.step(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// step takes the lock when free, or checks the held lock's connection.
func (l *Leader) step(ctx context.Context) {
	tctx, cancel := context.WithTimeout(ctx, LeaderTry)
	defer cancel()
	if l.held.Load() {
		// The lock lives as long as its session: a failed round trip means
		// the session (and so the lock) may be gone, and another node may lead.
		if _, err := l.conn.ExecContext(tctx, `SELECT 1`); err != nil {
			l.log.Warn("leadership lost", "role", l.name, "err", err)
			l.release()
		}
		return
	}
	c, err := l.db.locks.Conn(tctx)
	if err != nil {
		return
	}
	var got bool
	if err := c.QueryRowContext(tctx, `SELECT pg_try_advisory_lock(?)`, l.key).Scan(&got); err != nil || !got {
		c.Close()
		return
	}
	l.conn = c
	l.held.Store(true)
	l.log.Info("leadership taken", "role", l.name)
}

func (l *Leader) release() {
	if !l.held.Swap(false) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, _ = l.conn.ExecContext(ctx, `SELECT pg_advisory_unlock(?)`, l.key)
	// A connection that may still hold the lock must not go back to the pool.
	_ = l.conn.Raw(func(any) error { return driver.ErrBadConn })
	l.conn.Close()
	l.conn = nil
}
