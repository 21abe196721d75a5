package store

import (
	"context"
	"testing"
)

// A hot transaction learns its statements: the first run executes them
// unprepared and prepares them after the commit, the next runs them
// prepared with the same results; the number learned is bounded.
func TestWriteHotLearnsStatements(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	const q = `SELECT count(*) FROM users WHERE email != ?`
	run := func() int {
		var n int
		if err := db.writeHot(ctx, func(tx *Tx) error {
			if _, err := tx.ExecContext(ctx, `UPDATE users SET name = name WHERE id = ?`, "none"); err != nil {
				return err
			}
			return tx.QueryRowContext(ctx, q, "x").Scan(&n)
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	first := run()
	if _, ok := db.wstmts.Load(q); !ok {
		t.Fatal("the hot statement was not prepared after the first commit")
	}
	if second := run(); second != first {
		t.Fatalf("prepared run answered %d, unprepared %d", second, first)
	}
	if n := db.nhot.Load(); n != 2 {
		t.Fatalf("learned %d statements, want 2", n)
	}
	db.nhot.Store(maxHotStmts)
	const other = `SELECT count(*) FROM organizations WHERE id != ?`
	_ = db.writeHot(ctx, func(tx *Tx) error { var n int; return tx.QueryRowContext(ctx, other, "x").Scan(&n) })
	if _, ok := db.wstmts.Load(other); ok {
		t.Fatal("a statement was learned past the bound")
	}
}
