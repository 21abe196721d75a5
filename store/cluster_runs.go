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

// SweepOrphanedChats is FailOrphanedChats, and FailOrphanedRuns for task
// runs, while servers run: on a cluster a server that died leaves its turns
// and runs to the others' periodic sweep; one server alone has nothing to
// sweep (its own are live).
func (db *DB) SweepOrphanedChats(ctx context.Context, reason string) (int, error) {
	if !db.pg {
		return 0, nil
	}
	n, err := db.failOrphans(ctx, reason)
	if err != nil {
		return n, err
	}
	m, err := db.failOrphanedRuns(ctx, reason)
	return n + m, err
}

// queryOrphanedChats: NOT EXISTS, a seek of task_runs per running session;
// NOT IN (SELECT session_id FROM task_runs) read every run ever recorded
// into a hash, every 30 s on each cluster.
const queryOrphanedChats = `SELECT s.id, '' FROM agent_sessions s WHERE s.status = 'running' AND s.waiting_approval = 0
		AND s.last_activity < ? AND NOT EXISTS (SELECT 1 FROM task_runs r WHERE r.session_id = s.id)
		AND NOT EXISTS (SELECT 1 FROM run_checkpoints c WHERE c.session_id = s.id)`

func (db *DB) failOrphans(ctx context.Context, reason string) (int, error) {
	return db.failUnheld(ctx, reason, queryOrphanedChats)
}

// FailOrphanedRuns is FailInterruptedRuns for a server taking over the
// scheduling: on a cluster it fails only the task runs no live server holds
// (a leader that lost its lock but not its process finishes its own), and
// the orphaned-runs sweep catches those idle for less than orphanIdle then.
func (db *DB) FailOrphanedRuns(ctx context.Context, reason string) (int, error) {
	if !db.pg {
		return db.FailInterruptedRuns(ctx, reason)
	}
	return db.failOrphanedRuns(ctx, reason)
}

const queryOrphanedRuns = `SELECT s.id, r.task_id FROM agent_sessions s JOIN task_runs r ON r.session_id = s.id
		WHERE s.status = 'running' AND s.last_activity < ? AND ` + notResumable

func (db *DB) failOrphanedRuns(ctx context.Context, reason string) (int, error) {
	return db.failUnheld(ctx, reason, queryOrphanedRuns)
}

// failUnheld fails the running sessions query lists (id, task id or ”)
// that have been idle past orphanIdle and that no live server holds. The
// queries spell the status out ('running'): agent_sessions_running, a
// partial index, serves only a literal (migration 0154).
func (db *DB) failUnheld(ctx context.Context, reason, query string) (int, error) {
	rows, err := db.r.QueryContext(ctx, query, TS(db.Now().Add(-orphanIdle)))
	if err != nil {
		return 0, err
	}
	type run struct{ id, task string }
	var runs []run
	for rows.Next() {
		var r run
		if err := rows.Scan(&r.id, &r.task); err != nil {
			rows.Close()
			return 0, err
		}
		runs = append(runs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(runs) == 0 {
		return 0, err
	}
	c, err := db.locks.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	n := 0
	for _, r := range runs {
		held, err := db.runHeld(ctx, c, r.id)
		if err != nil {
			return n, err
		}
		if held {
			continue
		}
		failed := false
		err = db.Write(ctx, func(tx *Tx) error {
			ok, err := transitionAgentSessionTx(ctx, tx, r.id, SessionTransition{From: SessionRunning, To: SessionFailed, Reason: reason})
			if failed = ok; err != nil || !ok {
				return err
			}
			if r.task == "" {
				return nil
			}
			_, err = tx.ExecContext(ctx, `UPDATE tasks SET last_status = ?, last_error = ? WHERE id = ? AND last_session_id = ?`,
				SessionFailed, reason, r.task, r.id)
			return err
		})
		if err != nil {
			return n, err
		}
		if failed {
			n++
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
