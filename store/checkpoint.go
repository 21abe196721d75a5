package store

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// WAL checkpointing on SQLite, off the writer's path.
//
// SQLite's automatic checkpoint (wal_autocheckpoint, every 1000 pages) runs
// inside the COMMIT of whichever write crosses the threshold: the single
// writer copied WAL frames into the database file and fsynced it while
// every waiting ingest delivery waited too (6-7 % of all CPU under
// webhook load, all of it on the writer's critical path). So the writer
// connection has wal_autocheckpoint=0 and this checkpointer runs PASSIVE
// checkpoints on a connection of its own, a short while after writes,
// beside the writer (PASSIVE never blocks it nor the readers).
//
// A PASSIVE checkpoint cannot restart the log while writes keep coming (the
// writer always begins before the checkpoint catches up), so under a
// continuous load the WAL would grow without end. The bound: before a write
// transaction finding the -wal file larger than walLimit, the writer itself
// waits for a RESTART checkpoint (mostly already copied by the background ones),
// after which its next transaction writes the log from its start again;
// journal_size_limit=walLimit then truncates the file back to the limit, so
// its size says when the log outgrew the limit again. Durability is
// unchanged: commits still fsync the WAL (synchronous=FULL) before the ack,
// and a crash with a long WAL only makes recovery read more of it.

// Tunables (variables so tests can make them small).
var (
	// walLimit bounds the -wal file: past it the writer forces a restart.
	walLimit int64 = 64 << 20
	// ckptDelay: how long after a commit the background checkpoint runs;
	// the commits meanwhile are copied in the same pass (a hot page once).
	// Short on purpose: a pass copies what 20 ms of writes left, so its
	// fsync of the database file is small. At 250 ms each pass copied and
	// fsynced megabytes, and the writer's WAL fsyncs waited behind them:
	// webhook ingest's p99 at 64 connections doubled (29 vs 63-68 ms, same
	// run, BENCHMARKS.md) for about 10 % less CPU per event.
	ckptDelay = 20 * time.Millisecond
)

// checkpointer runs PASSIVE checkpoints in the background and the writer's
// bounding RESTART, on its own connection.
type checkpointer struct {
	conn    *sql.DB
	walPath string
	mu      sync.Mutex // one checkpoint at a time on conn
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	// retryAt: after a RESTART that could not finish, the -wal size past
	// which the writer tries again (0: at walLimit).
	retryAt  atomic.Int64
	restarts atomic.Int64 // RESTART checkpoints the writer forced (tests)
	failed   atomic.Int64 // and the ones that could not finish
	closed   sync.Once
}

// writerPragmas are added to the writer connection only.
var writerPragmas = []string{"wal_autocheckpoint(0)"}

func startCheckpointer(path string, pragmas []string) (*checkpointer, error) {
	q := url.Values{}
	for _, p := range pragmas {
		if len(p) > 13 && p[:13] == "busy_timeout(" {
			continue
		}
		q.Add("_pragma", p)
	}
	// Short: a RESTART waits for readers of the old log while the writer
	// waits for it; API reads take milliseconds, and a long one (a backup)
	// must not hold the writer for the usual ten seconds at every try.
	q.Add("_pragma", "busy_timeout(50)")
	conn, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	conn.SetMaxOpenConns(1)
	conn.SetMaxIdleConns(1)
	conn.SetConnMaxLifetime(0)
	c := &checkpointer{conn: conn, walPath: path + "-wal", wake: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c, nil
}

// run checkpoints ckptDelay after the first commit that follows the
// previous checkpoint; idle, it sleeps.
func (c *checkpointer) run() {
	defer close(c.done)
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-c.wake:
		}
		t.Reset(ckptDelay)
		select {
		case <-c.stop:
			t.Stop()
			return
		case <-t.C:
		}
		c.checkpoint("PASSIVE")
	}
}

// checkpoint runs one checkpoint of the given mode and reports whether it
// finished (not busy).
func (c *checkpointer) checkpoint(mode string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	var busy, log, done int
	err := c.conn.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &log, &done)
	return err == nil && busy == 0
}

// committed is called by the writer after each commit: it wakes the
// background checkpointer.
func (c *checkpointer) committed() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// bound is called by the writer before each write transaction, holding the
// writer connection (so no other write can start): when the log has
// outgrown walLimit it waits for a RESTART checkpoint, after which this
// transaction writes the log from its start. Before the transaction, not
// after the previous commit: the acknowledgements of that commit do not
// wait for it.
func (c *checkpointer) bound() {
	fi, err := os.Stat(c.walPath)
	if err != nil || fi.Size() <= max(walLimit, c.retryAt.Load()) {
		return
	}
	if c.checkpoint("RESTART") {
		c.restarts.Add(1)
		c.retryAt.Store(0)
		return
	}
	// A long reader (a backup's VACUUM INTO) still holds the old log: wait
	// for it again only once the log has grown by another quarter limit,
	// not before every write (each try waits up to the busy timeout).
	c.failed.Add(1)
	c.retryAt.Store(fi.Size() + walLimit/4)
}

func (c *checkpointer) close() {
	c.closed.Do(func() {
		close(c.stop)
		<-c.done
		c.conn.Close()
	})
}
