package store

import (
	"context"
	"testing"
	"time"
)

// A turn held by a live server is never swept; once its server is gone
// (the hold released, as a dead server's session is) it is failed once.
func TestSweepOrphanedChats(t *testing.T) {
	a, u := openTempPG(t)
	ctx := context.Background()
	b, err := OpenPostgres(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	old := TS(time.Now().Add(-time.Minute))
	sid := NewID()
	for _, q := range []string{
		`INSERT INTO organizations (id, name, slug, created_at, updated_at) VALUES ('o', 'o', 'o', '', '')`,
		`INSERT INTO projects (id, org_id, name, slug, created_at, updated_at) VALUES ('p', 'o', 'p', 'p', '', '')`,
	} {
		if _, err := a.w.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.w.ExecContext(ctx, `INSERT INTO agent_sessions (id, org_id, project_id, source, trigger_source, status, last_activity, created_at, updated_at)
		VALUES (?, 'o', 'p', 'webchat', 'web', 'running', ?, ?, ?)`, sid, old, old, old); err != nil {
		t.Fatal(err)
	}
	release := a.HoldRun(ctx, sid)
	if on, err := b.SessionStreaming(ctx, sid); err != nil || !on {
		t.Fatalf("streaming: %v %v", on, err)
	}
	if n, err := b.SweepOrphanedChats(ctx, "gone"); err != nil || n != 0 {
		t.Fatalf("swept a held turn: %d %v", n, err)
	}
	if n, err := b.FailOrphanedChats(ctx, "gone"); err != nil || n != 0 {
		t.Fatalf("a starting server failed a held turn: %d %v", n, err)
	}
	release()
	if n, err := b.SweepOrphanedChats(ctx, "gone"); err != nil || n != 1 {
		t.Fatalf("orphan not swept: %d %v", n, err)
	}
	if on, err := b.SessionStreaming(ctx, sid); err != nil || on {
		t.Fatalf("a failed turn still streams: %v %v", on, err)
	}
}
