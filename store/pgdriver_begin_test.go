package store

import (
	"context"
	"errors"
	"testing"
)

// BEGIN goes with a transaction's first statement (pgdriver.go, BeginTx):
// the transaction is still SERIALIZABLE from that first statement on, a
// read-only or empty Write needs no round trip of its own, a failed first
// statement leaves the session usable, and a rollback of a transaction the
// server never saw sends nothing.
func TestDeferredBeginKeepsTheTransaction(t *testing.T) {
	db, _ := openTempPG(t)
	ctx := context.Background()
	var level, xid1, xid2 string
	err := db.Write(ctx, func(tx *Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT current_setting('transaction_isolation')`).Scan(&level); err != nil {
			return err
		}
		// One transaction across statements: the same transaction id twice.
		if err := tx.QueryRowContext(ctx, `SELECT txid_current()::text`).Scan(&xid1); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT txid_current()::text`).Scan(&xid2)
	})
	if err != nil {
		t.Fatal(err)
	}
	if level != "serializable" || xid1 != xid2 {
		t.Fatalf("isolation %q, transaction ids %s / %s", level, xid1, xid2)
	}
	// Empty, and abandoned before any statement: nothing reaches the server.
	if err := db.Write(ctx, func(*Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := db.Write(ctx, func(*Tx) error { return boom }); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	// A first statement that fails: the transaction is rolled back whole and
	// the writer session serves the next Write.
	err = db.Write(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO organizations (id) VALUES (NULL)`); err == nil {
			return errors.New("the bad insert succeeded")
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	// Queued statements then a rollback: none of them stays.
	err = db.Write(ctx, func(tx *Tx) error {
		if err := CreateAgentSessionTx(ctx, tx, &AgentSession{ID: "deferred-begin", OrgID: "o", ProjectID: "p"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM agent_sessions WHERE id = 'deferred-begin'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows of a rolled-back transaction, %v", n, err)
	}
	if err := db.Write(ctx, func(tx *Tx) error {
		return tx.QueryRowContext(ctx, `SELECT current_setting('transaction_isolation')`).Scan(&level)
	}); err != nil || level != "serializable" {
		t.Fatalf("after the failures: %q %v", level, err)
	}
}
