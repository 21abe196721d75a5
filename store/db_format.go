package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
)

// newPageSize is the page size of a database this binary creates (a
// variable so the test binary can weigh others; see db_format_bench_test.go).
//
// Why not SQLite's 4096: a stored webhook event is a ~1.6 KB row and an
// incident ~1.1 KB, so a 4 KB page holds two events with a quarter of it
// unused, and every page costs its own WAL frame (two pwrite calls and a
// checksum), its own checkpoint copy (pread from the log, pwrite to the
// file) and its own b-tree split. 8 KB pages hold five events: fewer
// frames, copies and splits for the same rows. Under the ingest load that
// halved the pwrite and pread calls per event and cut the instructions per
// event by 2-5 % (bigger group commits gain more). 16 KB pages write more
// bytes than they save calls: every commit rewrites the last page of each
// append-only index and the b-trees' parents, whatever their size.
var newPageSize = 8192

// formatNew gives a new, empty database file its page size before anything
// else touches it. It must run before the pools' connections: they set
// journal_mode=WAL first (the driver runs the DSN's pragmas in its own
// order), and in WAL mode SQLite no longer changes the page size, not
// even on an empty file. An existing database is left alone: its page
// size only changes with a VACUUM outside WAL mode (deploy/README.md).
//
// "Empty" is the main file at zero bytes and no log beside it: a database
// whose first transactions are still only in its -wal file is not new.
func formatNew(ctx context.Context, path string) error {
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		return err
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() != 0 {
		return nil
	}
	c, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetMaxOpenConns(1)
	// One connection, in this order: the page size and incremental vacuum
	// take effect on the empty file, then WAL mode writes its first page.
	for _, p := range []string{
		fmt.Sprintf("PRAGMA page_size=%d", newPageSize),
		"PRAGMA auto_vacuum=INCREMENTAL",
		"PRAGMA journal_mode=WAL",
	} {
		if _, err := c.ExecContext(ctx, p); err != nil {
			return fmt.Errorf("format %s: %s: %w", path, p, err)
		}
	}
	return nil
}
