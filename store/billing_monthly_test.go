package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// monthlyFixture is an org and helpers to bump and read its "events" counter.
type monthlyFixture struct {
	t    *testing.T
	db   *DB
	org  string
	seed int64
}

func newMonthlyFixture(t *testing.T) *monthlyFixture {
	db, _ := openTemp(t)
	f := &monthlyFixture{t: t, db: db}
	if err := db.Write(context.Background(), func(tx *Tx) error {
		var err error
		f.org, _, err = seedOrgTx(context.Background(), tx, "monthly")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return f
}

// batch bumps by one k times in one transaction against limit and returns
// how many were let through and the use the last refusal reported; fail
// makes the transaction roll back.
func (f *monthlyFixture) batch(k int, limit float64, fail error) (ok int, cur int64, err error) {
	err = f.db.Write(context.Background(), func(tx *Tx) error {
		ok, cur = 0, -1
		for range k {
			over, c, err := BumpMonthlyWithin(context.Background(), tx, f.org, "events", 1, limit, true,
				func() (int64, error) { return f.seed, nil })
			if err != nil {
				return err
			}
			if over {
				cur = c
			} else {
				ok++
			}
		}
		return fail
	})
	return ok, cur, err
}

func (f *monthlyFixture) stored(period string) int64 {
	f.t.Helper()
	var n int64
	err := f.db.r.QueryRow(`SELECT COALESCE((SELECT n FROM billing_counters WHERE org_id = ? AND meter = 'events' AND period = ?), -1)`,
		f.org, period).Scan(&n)
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// A transaction's increments are decided one by one against the limit and
// stored together at its end; a transaction that rolls back leaves the
// count as it was, in the database and in what the next one decides on.
func TestBumpMonthlyBatchAndRollback(t *testing.T) {
	f := newMonthlyFixture(t)
	f.seed = 1 // billing turned on mid-month: one event already recorded
	period := Period(f.db.Now())
	if ok, cur, err := f.batch(6, 4, nil); ok != 3 || cur != 4 || err != nil {
		t.Fatalf("batch of 6 at limit 4 from 1: %d let through, use %d, %v; want 3, 4", ok, cur, err)
	}
	if n := f.stored(period); n != 4 {
		t.Fatalf("stored %d, want 4", n)
	}
	boom := errors.New("rolled back")
	if ok, _, err := f.batch(3, 10, boom); ok != 3 || !errors.Is(err, boom) {
		t.Fatalf("rolled-back batch: %d let through, %v", ok, err)
	}
	if n := f.stored(period); n != 4 {
		t.Fatalf("after a rollback stored %d, want 4", n)
	}
	// The next batch decides on 4, not on 7.
	if ok, cur, err := f.batch(3, 6, nil); ok != 2 || cur != 6 || err != nil {
		t.Fatalf("batch of 3 at limit 6 after the rollback: %d let through, use %d, %v; want 2, 6", ok, cur, err)
	}
	if n := f.stored(period); n != 6 {
		t.Fatalf("stored %d, want 6", n)
	}
	// A refused batch changes nothing.
	if ok, cur, err := f.batch(2, 6, nil); ok != 0 || cur != 6 || err != nil || f.stored(period) != 6 {
		t.Fatalf("at the limit: %d let through, use %d, %v, stored %d", ok, cur, err, f.stored(period))
	}
}

// A new month starts a new counter (from the seed) and leaves the last
// month's as it was.
func TestBumpMonthlyRollover(t *testing.T) {
	f := newMonthlyFixture(t)
	now := time.Date(2026, 11, 30, 23, 59, 0, 0, time.UTC)
	f.db.Now = func() time.Time { return now }
	if ok, cur, err := f.batch(4, 3, nil); ok != 3 || cur != 3 || err != nil {
		t.Fatalf("November: %d let through, use %d, %v", ok, cur, err)
	}
	now = now.Add(2 * time.Minute)
	if ok, cur, err := f.batch(2, 3, nil); ok != 2 || cur != -1 || err != nil {
		t.Fatalf("December: %d let through, use %d, %v", ok, cur, err)
	}
	if nov, dec := f.stored("2026-11"), f.stored("2026-12"); nov != 3 || dec != 2 {
		t.Fatalf("stored November %d, December %d; want 3, 2", nov, dec)
	}
	if ok, cur, err := f.batch(2, 3, nil); ok != 1 || cur != 3 || err != nil {
		t.Fatalf("December again: %d let through, use %d, %v", ok, cur, err)
	}
}
