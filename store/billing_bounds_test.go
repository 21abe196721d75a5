package store

import (
	"context"
	"errors"
	"testing"
)

// The quota gate's in-memory bound of a trigger-kept count never lets a
// create pass the limit: after deletes it re-reads the count (creates are
// allowed again), and a transaction that deleted rows, checked a create and
// then rolled back leaves no bound below the restored count.
func TestCountedOverBound(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	const limit = 5
	if err := db.SetQuotaGate(func(ctx context.Context, tx *Tx, kind QuotaKind, orgID string, n int64) error {
		over, err := CountedOver(ctx, tx, kind, orgID, n, limit)
		if err == nil && over {
			return &QuotaError{Quota: kind, Limit: limit}
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var org string
	if err := db.Write(ctx, func(tx *Tx) error {
		var err error
		org, _, err = seedOrgTx(ctx, tx, "bound", "first")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	create := func() error { return db.CreateProject(ctx, &Project{OrgID: org, Name: "p" + NewID()}) }
	count := func() int64 {
		t.Helper()
		n, _, err := QuotaUse(ctx, db.r, QuotaProjects, org, db.Now())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	var ids []string
	fill := func() {
		t.Helper()
		for count() < limit {
			p := &Project{OrgID: org, Name: "p" + NewID()}
			if err := db.CreateProject(ctx, p); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, p.ID)
		}
		if err := create(); !IsQuotaError(err) {
			t.Fatalf("a create over the limit: %v", err)
		}
	}
	fill()
	// Deletes lower the count below the (now high) bound: creates re-read it.
	for _, id := range ids[:2] {
		if err := db.DeleteProject(ctx, org, id); err != nil {
			t.Fatal(err)
		}
	}
	ids = ids[2:]
	fill()
	// Deleted, checked (count 2, bound 3), rolled back: the count is 5 again
	// and the bound of that transaction must not be kept.
	boom := errors.New("rolled back")
	err := db.Write(ctx, func(tx *Tx) error {
		for _, id := range ids[:3] {
			if _, err := tx.ExecContext(ctx, `DELETE FROM projects WHERE id = ?`, id); err != nil {
				return err
			}
		}
		if err := createProjectTx(ctx, tx, &Project{OrgID: org, Name: "inside"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("the transaction: %v", err)
	}
	if err := create(); !IsQuotaError(err) {
		t.Fatalf("a create over the limit after the rollback: %v (count %d)", err, count())
	}
	if n := count(); n != limit {
		t.Fatalf("count %d, want %d", n, limit)
	}
}

// The monthly counter behind the webhook events quota: bumps within the
// limit pass, the one over is refused and leaves the counter as it was,
// bumps rolled back are not counted, and without a limit it still counts.
func TestBumpMonthlyWithin(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	var org string
	if err := db.Write(ctx, func(tx *Tx) error {
		var err error
		org, _, err = seedOrgTx(ctx, tx, "monthly")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	seed := func() (int64, error) { return 0, nil }
	bump := func(limit float64, limited bool, fail error) (bool, int64, error) {
		var over bool
		var cur int64
		err := db.Write(ctx, func(tx *Tx) error {
			var err error
			if over, cur, err = BumpMonthlyWithin(ctx, tx, org, "events", 1, limit, limited, seed); err != nil {
				return err
			}
			return fail
		})
		return over, cur, err
	}
	stored := func() int64 {
		t.Helper()
		var n int64
		if err := db.r.QueryRow(`SELECT n FROM billing_counters WHERE org_id = ? AND meter = 'events'`, org).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	boom := errors.New("rolled back")
	for i := range 3 {
		if over, _, err := bump(3, true, nil); over || err != nil {
			t.Fatalf("bump %d within the limit: over %v, %v", i+1, over, err)
		}
		if _, _, err := bump(3, true, boom); !errors.Is(err, boom) {
			t.Fatal(err)
		}
	}
	if over, cur, err := bump(3, true, nil); !over || cur != 3 || err != nil {
		t.Fatalf("the 4th bump: over %v cur %d, %v", over, cur, err)
	}
	if n := stored(); n != 3 {
		t.Fatalf("counter %d, want 3", n)
	}
	if over, _, err := bump(0, false, nil); over || err != nil || stored() != 4 {
		t.Fatalf("without a limit: over %v, %v, counter %d", over, err, stored())
	}
}
