package store

import (
	"context"
	"testing"
)

// Two servers on one PostgreSQL database: a plan changed on one is the plan
// the other's quota gate reads in its next write transaction (the accounts
// cache is SQLite's only: billing_account_pg.go).
func TestBillingAccountSeenAcrossServers(t *testing.T) {
	a, u := openTempPG(t)
	ctx := context.Background()
	b, err := OpenPostgres(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var org string
	err = a.Write(ctx, func(tx *Tx) error {
		usr := &User{Email: "plan@example.com", Name: "p"}
		if err := createUserTx(ctx, tx, usr); err != nil {
			return err
		}
		o := &Organization{Name: "plan"}
		err := createOrgTx(ctx, tx, o, usr.ID)
		org = o.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	gateRead := func(db *DB) string {
		t.Helper()
		var plan string
		if err := db.Write(ctx, func(tx *Tx) error {
			acc, err := BillingAccountTx(ctx, tx, org)
			if err == nil {
				plan = acc.PlanID
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return plan
	}
	setPlan := func(db *DB, plan string) {
		t.Helper()
		if _, err := db.UpdateBillingAccount(ctx, org, func(_ *Tx, acc *BillingAccount) error { acc.PlanID = plan; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	setPlan(a, "small")
	if got := gateRead(a); got != "small" {
		t.Fatalf("server a reads plan %q", got)
	}
	setPlan(b, "large")
	if got := gateRead(a); got != "large" {
		t.Fatalf("server a still reads plan %q after server b set large", got)
	}
}
