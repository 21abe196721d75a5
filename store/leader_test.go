package store

import (
	"context"
	"testing"
	"time"
)

// One of two servers leads; when its session dies (as with kill -9 of its
// process) the other takes over within a few tries, and the old one knows
// it no longer leads.
func TestLeaderFailover(t *testing.T) {
	a, u := openTempPG(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b, err := OpenPostgres(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	la, lb := a.NewLeader("scheduler", nil), b.NewLeader("scheduler", nil)
	go la.Run(ctx)
	waitFor(t, 5*time.Second, la.IsLeader)
	go lb.Run(ctx)
	time.Sleep(LeaderTry + 500*time.Millisecond)
	if lb.IsLeader() {
		t.Fatal("two leaders")
	}
	// The leader's session ends the way a dead node's does.
	if _, err := b.locks.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'
		AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	waitFor(t, 10*time.Second, lb.IsLeader)
	t.Logf("failover took %v", time.Since(start))
	waitFor(t, 10*time.Second, func() bool { return !la.IsLeader() })
}

// On SQLite the one server always leads.
func TestLeaderSQLite(t *testing.T) {
	sqliteOnly(t)
	db, _ := openTemp(t)
	if !db.NewLeader("scheduler", nil).IsLeader() {
		t.Fatal("the appliance does not lead")
	}
}

func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("not within %v", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
