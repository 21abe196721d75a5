package store

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// A write transaction that loses a race is run again, whole, inside Write:
// SQLite's BUSY (another process, a backup, holds the file), PostgreSQL's
// 40001 (serialization failure) and 40P01 (deadlock), and a connection that
// broke before the transaction started. Callers never see these errors
// unless every attempt lost, so no route answers 500 for a conflict that a
// second try resolves; what was retried and what gave up is counted for
// /metrics (RetryStats).

// Bounds of the retry. Three servers on one database racing for the same
// rows collide again when they retry in step, so each wait is drawn at
// random from [0, cap] (full jitter) with the cap doubling from
// retryBase up to retryMax; retryAttempts bounds the whole at about 1.5 s.
const (
	retryAttempts = 12
	retryBase     = 4 * time.Millisecond
	retryMax      = 250 * time.Millisecond
)

// RetryStats counts transactions run again, by cause, and those that lost
// every attempt (their error reached the caller).
type RetryStats struct {
	Serialization, Deadlock, Busy, BrokenConn uint64 // retried attempts
	GaveUp                                    uint64
}

type retryCounters struct {
	serialization, deadlock, busy, brokenConn, gaveUp atomic.Uint64
}

// RetryStats reads the counters since the process started.
func (db *DB) RetryStats() RetryStats {
	c := &db.retries
	return RetryStats{Serialization: c.serialization.Load(), Deadlock: c.deadlock.Load(), Busy: c.busy.Load(),
		BrokenConn: c.brokenConn.Load(), GaveUp: c.gaveUp.Load()}
}

// count notes one retried attempt by its cause.
func (c *retryCounters) count(err error) {
	switch pgError(err) {
	case "40001":
		c.serialization.Add(1)
	case "40P01":
		c.deadlock.Add(1)
	case "":
		if pgRetryable(err) {
			c.brokenConn.Add(1)
		} else {
			c.busy.Add(1)
		}
	}
}

// retryWait is the jittered pause before attempt n+1 (n counts from 0).
func retryWait(n int) time.Duration {
	limit := retryBase << min(n, 10)
	if limit > retryMax {
		limit = retryMax
	}
	return time.Duration(rand.Int64N(int64(limit) + 1))
}

// writeRetrying runs writeOnce until it succeeds, fails for a reason a new
// attempt cannot change, or the attempts or ctx run out.
func (db *DB) writeRetrying(ctx context.Context, fn func(tx *Tx) error) error {
	var err error
	for n := 0; n < retryAttempts; n++ {
		err = db.writeOnce(ctx, fn)
		if !isBusy(err) {
			return err
		}
		if n == retryAttempts-1 {
			break
		}
		db.retries.count(err)
		select {
		case <-ctx.Done():
			db.retries.gaveUp.Add(1)
			return ctx.Err()
		case <-time.After(retryWait(n)):
		}
	}
	db.retries.gaveUp.Add(1)
	return err
}

// Contended reports an error that is a lost race which every attempt lost
// (or one a read hit): the request may succeed if sent again, so the API
// answers 503 with Retry-After rather than 500.
func Contended(err error) bool { return err != nil && isBusy(err) }
