package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"sync"
	"time"
)

// Agent runs on a cluster (PostgreSQL). A server holds a session advisory
// lock per agent session it is running, on one connection of its own, from
// the moment the turn is live until its last event is saved. So any server
// can tell a run in progress elsewhere (lock held) from one whose server
// died (status running, lock free: PostgreSQL dropped the dead server's
// session and its locks). On SQLite there is one server and these are no-ops.

// runLocks is this server's connection holding its runs' locks.
type runLocks struct {
	mu   sync.Mutex
	conn *sql.Conn
	held map[int64]int
}

func runKey(sessionID string) int64 { return lockKey("opsagent:run:" + sessionID) }

// HoldRun marks sessionID as run by this server until release is called.
// A failure to take the lock is logged by the caller's absence of it only:
// the run goes on (it would on one server too), and a sweep may then
// consider it orphaned once it is idle past orphanIdle.
func (db *DB) HoldRun(ctx context.Context, sessionID string) (release func()) {
	if !db.pg {
		return func() {}
	}
	rl := &db.runs
	k := runKey(sessionID)
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.conn == nil {
		c, err := db.locks.Conn(ctx)
		if err != nil {
			return func() {}
		}
		rl.conn, rl.held = c, map[int64]int{}
	}
	if _, err := rl.conn.ExecContext(ctx, `SELECT pg_advisory_lock(?)`, k); err != nil {
		rl.dropLocked()
		return func() {}
	}
	rl.held[k]++
	conn := rl.conn
	var once sync.Once
	return func() {
		once.Do(func() {
			rl.mu.Lock()
			defer rl.mu.Unlock()
			if rl.conn != conn {
				return // that session ended, and its locks with it
			}
			if _, err := rl.conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(?)`, k); err != nil {
				rl.dropLocked()
				return
			}
			if rl.held[k]--; rl.held[k] <= 0 {
				delete(rl.held, k)
			}
		})
	}
}

// dropLocked discards the lock connection (never back to the pool while it
// may hold locks); the next HoldRun opens another.
func (rl *runLocks) dropLocked() {
	if rl.conn != nil {
		_ = rl.conn.Raw(func(any) error { return driver.ErrBadConn })
		rl.conn.Close()
	}
	rl.conn, rl.held = nil, nil
}

func (db *DB) closeRuns() {
	db.runs.mu.Lock()
	defer db.runs.mu.Unlock()
	db.runs.dropLocked()
}

// runHeldElsewhere reports whether some server holds sessionID's run lock.
func (db *DB) runHeld(ctx context.Context, c *sql.Conn, sessionID string) (bool, error) {
	k := runKey(sessionID)
	var got bool
	if err := c.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(?)`, k).Scan(&got); err != nil {
		return false, err
	}
	if got {
		_, err := c.ExecContext(ctx, `SELECT pg_advisory_unlock(?)`, k)
		return false, err
	}
	return true, nil
}

// SessionStreaming reports whether a session may still produce events: it
// is running (not waiting for a decision), or a server still holds its run
// (it has saved the outcome but not yet its last events). A viewer on
// another server follows the stored events while it is true.
func (db *DB) SessionStreaming(ctx context.Context, sessionID string) (bool, error) {
	var active bool
	err := db.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM agent_sessions WHERE id = ?
		AND status IN ('pending', 'running') AND waiting_approval = 0)`, sessionID).Scan(&active)
	if err != nil || active || !db.pg {
		return active, err
	}
	c, err := db.locks.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer c.Close()
	return db.runHeld(ctx, c, sessionID)
}

// orphanIdle: a running session without a holder is only orphaned once it
// has been idle this long, which covers the moment between a turn's start
// (status running) and its server taking the lock.
const orphanIdle = 10 * time.Second

// FailOrphanedChats fails the chat turns left running by a server that
// stopped. On one server (SQLite) that is every running chat at start; on a
// cluster only those no live server holds, so a server starting, or
// sweeping, never ends another's turn.
func (db *DB) FailOrphanedChats(ctx context.Context, reason string) (int, error) {
	if !db.pg {
		return db.FailInterruptedChats(ctx, reason)
	}
	return db.failOrphans(ctx, reason)
}

// SweepOrphanedChats is FailOrphanedChats while servers run: on a cluster a
// server that died leaves its turns to the others' periodic sweep; one
// server alone has nothing to sweep (its own turns are live).
func (db *DB) SweepOrphanedChats(ctx context.Context, reason string) (int, error) {
	if !db.pg {
		return 0, nil
	}
	return db.failOrphans(ctx, reason)
}

func (db *DB) failOrphans(ctx context.Context, reason string) (int, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id FROM agent_sessions WHERE status = ? AND waiting_approval = 0
		AND last_activity < ? AND id NOT IN (SELECT session_id FROM task_runs)`, SessionRunning, TS(db.Now().Add(-orphanIdle)))
	if err != nil {
		return 0, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return 0, err
	}
	c, err := db.locks.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	n := 0
	for _, id := range ids {
		held, err := db.runHeld(ctx, c, id)
		if err != nil {
			return n, err
		}
		if held {
			continue
		}
		err = db.Write(ctx, func(tx *Tx) error {
			now := TS(tx.Now)
			res, err := tx.ExecContext(ctx, `UPDATE agent_sessions SET status = ?, reason = ?, ended_at = ?, last_activity = ?, updated_at = ?
				WHERE id = ? AND status = ? AND waiting_approval = 0`, SessionFailed, reason, now, now, now, id, SessionRunning)
			if err == nil {
				if k, _ := res.RowsAffected(); k == 1 {
					n++
				}
			}
			return err
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// RunHeldElsewhere reports whether another server of the cluster holds
// sessionID's run (a live turn, or a task run waiting in it for a
// decision). Always false on SQLite.
func (db *DB) RunHeldElsewhere(ctx context.Context, sessionID string) (bool, error) {
	if !db.pg {
		return false, nil
	}
	c, err := db.locks.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer c.Close()
	return db.runHeld(ctx, c, sessionID)
}
