package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// pragmaInt reads one integer pragma on a fresh connection of the file.
func pragmaInt(t *testing.T, path, pragma string) int {
	t.Helper()
	c, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var n int
	if err := c.QueryRow("PRAGMA " + pragma).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A database Open creates gets newPageSize, incremental vacuum and WAL
// mode, and keeps them after a reopen.
func TestOpenFormatsNewDatabase(t *testing.T) {
	sqliteOnly(t)
	db, path := openTemp(t)
	ctx := context.Background()
	if err := db.Write(ctx, func(tx *Tx) error {
		_, _, err := seedOrgTx(ctx, tx, "fmt", "prod")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	if err := db.r.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode %q (%v), want wal", mode, err)
	}
	if n := pragmaInt(t, path, "page_size"); n != newPageSize {
		t.Fatalf("page_size %d, want %d", n, newPageSize)
	}
	if n := pragmaInt(t, path, "auto_vacuum"); n != 2 {
		t.Fatalf("auto_vacuum %d, want 2 (incremental)", n)
	}
}

// A database created before Open formatted new files (SQLite's 4096-byte
// pages, WAL set by the DSN) keeps its page size, migrates and works.
func TestOpenKeepsPageSizeOfExistingDatabase(t *testing.T) {
	sqliteOnly(t)
	if newPageSize == 4096 {
		t.Skip("new databases get 4096-byte pages too")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "opsagent.db")
	old, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(ctx, `CREATE TABLE before_upgrade (id INTEGER PRIMARY KEY, v TEXT)`); err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(ctx, `INSERT INTO before_upgrade (v) VALUES ('kept')`); err != nil {
		t.Fatal(err)
	}
	old.Close()
	if n := pragmaInt(t, path, "page_size"); n != 4096 {
		t.Fatalf("the old-style database has %d-byte pages, want 4096 (WAL before page_size)", n)
	}
	for i := 0; i < 2; i++ {
		db, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Write(ctx, func(tx *Tx) error {
			_, _, err := seedOrgTx(ctx, tx, "old"+string(rune('a'+i)), "prod")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		var v string
		if err := db.r.QueryRowContext(ctx, `SELECT v FROM before_upgrade`).Scan(&v); err != nil || v != "kept" {
			t.Fatalf("row written before the upgrade: %q (%v)", v, err)
		}
		db.Close()
	}
	if n := pragmaInt(t, path, "page_size"); n != 4096 {
		t.Fatalf("page_size %d after Open, want the old 4096", n)
	}
	c, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var ok string
	if err := c.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check %q (%v)", ok, err)
	}
}
