package store

import (
	"context"
	"sync"
	"time"
)

// TryHoldRun is HoldRun without waiting: ok false when another server holds
// sessionID's run (its turn is live there). A server resuming a cut turn
// takes it first, so two servers never resume the same turn; the lock is
// re-entrant on this server's lock connection, so the resumed turn's own
// HoldRun stacks on it. On SQLite it always succeeds.
func (db *DB) TryHoldRun(ctx context.Context, sessionID string) (release func(), ok bool, err error) {
	if !db.pg {
		return func() {}, true, nil
	}
	rl := &db.runs
	k := runKey(sessionID)
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.conn == nil {
		c, err := db.locks.Conn(ctx)
		if err != nil {
			return nil, false, err
		}
		rl.conn, rl.held = c, map[int64]int{}
	}
	var got bool
	if err := rl.conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(?)`, k).Scan(&got); err != nil {
		rl.dropLocked()
		return nil, false, err
	}
	if !got {
		return nil, false, nil
	}
	rl.held[k]++
	conn := rl.conn
	var once sync.Once
	return func() {
		once.Do(func() {
			rl.mu.Lock()
			defer rl.mu.Unlock()
			if rl.conn != conn {
				return
			}
			if _, err := rl.conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(?)`, k); err != nil {
				rl.dropLocked()
				return
			}
			if rl.held[k]--; rl.held[k] <= 0 {
				delete(rl.held, k)
			}
		})
	}, true, nil
}

// RunLease is how often the servers of a cluster look for turns cut by a
// dead server (their run lock gone with its connection) to resume them: a
// dead server's turn goes on elsewhere within about one lease.
const RunLease = 5 * time.Second
