package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// Pings past HeartbeatPingsKept are pruned as new ones arrive.
func TestHeartbeatPingsArePruned(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return now }
	org, proj := NewID(), NewID()
	if err := db.Write(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO organizations (id, name, slug, created_at, updated_at) VALUES (?,?,?,?,?)`, org, "o", "o", TS(now), TS(now)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO projects (id, org_id, name, slug, created_at, updated_at) VALUES (?,?,?,?,?,?)`, proj, org, "p", "p", TS(now), TS(now))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	c := &HeartbeatCheck{OrgID: org, ProjectID: proj, Name: "c", TokenHash: "h", BadgeToken: "b", Period: time.Hour, Grace: time.Minute,
		Enabled: true, DueAt: now.Add(time.Hour), DeadlineAt: now.Add(time.Hour + time.Minute)}
	if err := db.CreateHeartbeat(ctx, c); err != nil {
		t.Fatal(err)
	}
	next := func(c *HeartbeatCheck, t time.Time) time.Time { return t.Add(c.Period) }
	for i := 0; i < HeartbeatPingsKept+30; i++ {
		now = now.Add(time.Second)
		if _, err := db.RecordHeartbeatPing(ctx, "h", PingSuccess, next); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := db.FindHeartbeatPings(ctx, c.ID, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != HeartbeatPingsKept || !ps[0].At.Equal(now) {
		t.Fatalf("got %d pings (newest %s), want %d ending at %s", len(ps), ps[0].At, HeartbeatPingsKept, now)
	}
}
