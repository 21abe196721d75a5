package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// Events SQLite's dedupe memory held (dedupe_key NULL) still dedupe on
// PostgreSQL after the move, through the index.
func TestCopyToKeepsDedupeWindow(t *testing.T) {
	pg, _ := openTempPG(t)
	ctx := context.Background()
	lite, err := Open(ctx, filepath.Join(t.TempDir(), "opsagent.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	f := &dedupeFixture{t: t, db: lite, hook: benchWebhook(t, lite), now: time.Now().UTC()}
	lite.Now = func() time.Time { return f.now }
	if err := lite.Write(ctx, func(tx *Tx) error {
		_, err := tx.Exec(`UPDATE webhooks SET dedupe_window_seconds = 60`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	first := f.one("a")
	f.now = f.now.Add(-2 * time.Minute)
	wantStored(t, f.one("old")) // outside the window by the move: stays unkeyed
	f.now = f.now.Add(2*time.Minute + time.Second)
	if _, err := lite.CopyTo(ctx, pg); err != nil {
		t.Fatal(err)
	}
	var keyed int
	if err := pg.r.QueryRow(`SELECT count(*) FROM webhook_events WHERE dedupe_key IS NOT NULL`).Scan(&keyed); err != nil {
		t.Fatal(err)
	}
	if keyed != 1 {
		t.Fatalf("%d events keyed on PostgreSQL, want 1", keyed)
	}
	f.db = pg
	pg.Now = func() time.Time { return f.now }
	wantDuplicate(t, f.one("a"), first.ID)
}

// Incidents whose main key SQLite's key memory held still attract their
// alerts on PostgreSQL after the move, through the index.
func TestCopyToIndexesHeldKeys(t *testing.T) {
	pg, _ := openTempPG(t)
	f := newKeyFixture(t)
	open := f.fire("group-a")
	if got := f.where(open); got != "held" {
		t.Fatalf("before the move the key is %q, want held", got)
	}
	if _, err := f.db.CopyTo(context.Background(), pg); err != nil {
		t.Fatal(err)
	}
	f.db = pg
	pg.Now = func() time.Time { return f.now }
	if got := f.where(open); got != "index" {
		t.Fatalf("after the move the key is %q, want index", got)
	}
	f.now = f.now.Add(time.Minute)
	if joined := f.fire("group-a"); joined != open {
		t.Fatalf("an alert after the move opened %s instead of joining %s", joined, open)
	}
}
