package store

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// setCheckpointTunables shrinks the checkpointer's limits for one test.
func setCheckpointTunables(t *testing.T, limit int64, delay time.Duration) {
	t.Helper()
	l, d := walLimit, ckptDelay
	walLimit, ckptDelay = limit, delay
	t.Cleanup(func() { walLimit, ckptDelay = l, d })
}

// The writer no longer checkpoints in its commits (wal_autocheckpoint=0),
// and a continuous writer with readers beside it must still keep the -wal
// file near walLimit: the forced RESTART bounds it.
func TestCheckpointerBoundsWALUnderContinuousWriter(t *testing.T) {
	sqliteOnly(t)
	setCheckpointTunables(t, 256<<10, 5*time.Millisecond)
	db, path := openTemp(t)
	ctx := context.Background()
	var auto int
	if err := db.w.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("writer wal_autocheckpoint %d (%v), want 0", auto, err)
	}
	if err := db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE ck_load (id INTEGER PRIMARY KEY, b BLOB)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // short readers all along, as the API's
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			var n int
			_ = db.r.QueryRowContext(ctx, `SELECT count(*) FROM ck_load`).Scan(&n)
		}
	}()
	const txs = 1200
	blob := make([]byte, 8<<10)
	var maxWAL int64
	for i := 0; i < txs; i++ {
		if err := db.Write(ctx, func(tx *Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO ck_load (b) VALUES (?)`, blob)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > maxWAL {
			maxWAL = fi.Size()
		}
	}
	close(stop)
	wg.Wait()
	// About 10 MB went through the log; bounded, it stays a small multiple
	// of the 256 KB limit (one transaction past it, or a restart that had
	// to wait out a reader).
	t.Logf("largest -wal file %d bytes; %d forced restarts, %d busy", maxWAL, db.ckpt.restarts.Load(), db.ckpt.failed.Load())
	if maxWAL > 3<<20 {
		t.Fatalf("-wal file reached %d bytes under a continuous writer, want it bounded near %d", maxWAL, walLimit)
	}
	if db.ckpt.restarts.Load() == 0 {
		t.Fatal("the writer never forced a restart of the log")
	}
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM ck_load`).Scan(&n); err != nil || n != txs {
		t.Fatalf("%d rows (%v), want %d", n, err, txs)
	}
}

// A write acknowledged (committed) but never checkpointed lives only in the
// WAL: the files as a kill -9 leaves them must still hold it.
func TestUncheckpointedCommitSurvivesCrash(t *testing.T) {
	sqliteOnly(t)
	setCheckpointTunables(t, 64<<20, time.Hour) // no background checkpoint during the test
	db, path := openTemp(t)
	ctx := context.Background()
	if err := db.Write(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE ck_crash (id INTEGER PRIMARY KEY, v TEXT)`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO ck_crash (v) VALUES ('acked')`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// Copy the database and its log while the server still has them open,
	// as a crash would leave them (no close, so no final checkpoint).
	dir := t.TempDir()
	crashed := filepath.Join(dir, "opsagent.db")
	for _, suffix := range []string{"", "-wal"} {
		copyFile(t, path+suffix, crashed+suffix)
	}
	if fi, err := os.Stat(crashed + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("the log is empty (%v): the test proves nothing", err)
	}
	db2, err := Open(ctx, crashed)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	var v string
	if err := db2.r.QueryRowContext(ctx, `SELECT v FROM ck_crash`).Scan(&v); err != nil || v != "acked" {
		t.Fatalf("after the crash: %q (%v), want the acknowledged row", v, err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// A long reader (as a backup's VACUUM INTO) keeps the old log alive: the
// writer's forced RESTART cannot finish, so it must not retry before every
// write (each try waits out the busy timeout), and once the reader is gone
// the log is bounded again.
func TestCheckpointerLongReaderDefersTheRestart(t *testing.T) {
	sqliteOnly(t)
	setCheckpointTunables(t, 256<<10, 5*time.Millisecond)
	db, path := openTemp(t)
	ctx := context.Background()
	if err := db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE ck_long (id INTEGER PRIMARY KEY, b BLOB)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	blob := make([]byte, 8<<10)
	write := func(n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			if err := db.Write(ctx, func(tx *Tx) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO ck_long (b) VALUES (?)`, blob)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(10)
	// A read transaction that stays open on a snapshot inside the log.
	rtx, err := db.r.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := rtx.QueryRowContext(ctx, `SELECT count(*) FROM ck_long`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	write(300) // about 2.5 MB of log, ten times the limit
	failed := db.ckpt.failed.Load()
	if failed == 0 {
		t.Fatal("no forced restart was refused while the reader held the log")
	}
	// One try per quarter limit of growth, not one per write (each write
	// adds about four frames, 16 KB: a try before every fourth write).
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if most := fi.Size()/(walLimit/4) + 1; failed > most {
		t.Fatalf("%d refused restarts while the log grew to %d bytes, want at most %d (one per quarter limit)", failed, fi.Size(), most)
	}
	if err := rtx.Rollback(); err != nil {
		t.Fatal(err)
	}
	restarts := db.ckpt.restarts.Load()
	write(300)
	if db.ckpt.restarts.Load() == restarts {
		t.Fatal("no restart once the reader was gone")
	}
	if fi, err = os.Stat(path + "-wal"); err != nil {
		t.Fatal(err)
	}
	// journal_size_limit truncated the file back after the restart.
	if fi.Size() > 2<<20 {
		t.Fatalf("-wal file %d bytes after the reader ended, want it back near the limit", fi.Size())
	}
	t.Logf("%d refused restarts with the reader, %d restarts in all; -wal %d bytes at the end", failed, db.ckpt.restarts.Load(), fi.Size())
}
