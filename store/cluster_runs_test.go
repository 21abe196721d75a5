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

// A task run another server still holds survives a takeover's recovery; an
// unheld one is failed with its task's status.
func TestFailOrphanedRuns(t *testing.T) {
	a, u := openTempPG(t)
	ctx := context.Background()
	b, err := OpenPostgres(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	old := TS(time.Now().Add(-time.Minute))
	for _, q := range []string{
		`INSERT INTO organizations (id, name, slug, created_at, updated_at) VALUES ('o', 'o', 'o', '', '')`,
		`INSERT INTO projects (id, org_id, name, slug, created_at, updated_at) VALUES ('p', 'o', 'p', 'p', '', '')`,
	} {
		if _, err := a.w.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	var tasks, sessions []string
	for i := 0; i < 2; i++ {
		tid, sid := NewID(), NewID()
		if _, err := a.w.ExecContext(ctx, `INSERT INTO tasks (id, org_id, project_id, name, prompt, last_session_id, last_status, created_at, updated_at)
			VALUES (?, 'o', 'p', ?, 'p', ?, 'running', ?, ?)`, tid, "t"+tid, sid, old, old); err != nil {
			t.Fatal(err)
		}
		if _, err := a.w.ExecContext(ctx, `INSERT INTO agent_sessions (id, org_id, project_id, task_id, source, trigger_source, status, last_activity, created_at, updated_at)
			VALUES (?, 'o', 'p', ?, 'task', 'manual', 'running', ?, ?, ?)`, sid, tid, old, old, old); err != nil {
			t.Fatal(err)
		}
		if _, err := a.w.ExecContext(ctx, `INSERT INTO task_runs (session_id, task_id, org_id, run_key, scheduled_for, created_at) VALUES (?, ?, 'o', ?, ?, ?)`,
			sid, tid, "k"+sid, old, old); err != nil {
			t.Fatal(err)
		}
		tasks, sessions = append(tasks, tid), append(sessions, sid)
	}
	release := a.HoldRun(ctx, sessions[0])
	defer release()
	if n, err := b.FailOrphanedRuns(ctx, "gone"); err != nil || n != 1 {
		t.Fatalf("failed %d runs (%v), want the unheld one", n, err)
	}
	for i, want := range []string{"running", "failed"} {
		var st string
		if err := b.r.QueryRowContext(ctx, `SELECT last_status FROM tasks WHERE id = ?`, tasks[i]).Scan(&st); err != nil || st != want {
			t.Fatalf("task %d: %q %v, want %s", i, st, err, want)
		}
	}
}
