package store

import (
	"context"
	"testing"
)

// A checkpoint writes only the messages its transcript gained, or from the
// first one that changed (the loop compacted its history); the resume and a
// reader of the running session's transcript get the whole transcript back,
// and ending the turn leaves only session_transcripts.
func TestCheckpointAppendsMessages(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	var org, sid string
	err := db.Write(ctx, func(tx *Tx) error {
		o, projects, err := seedOrgTx(ctx, tx, "cp", "prod")
		org = o
		if err != nil {
			return err
		}
		s := &AgentSession{OrgID: o, ProjectID: projects[0], Status: SessionRunning}
		if err := CreateAgentSessionTx(ctx, tx, s); err != nil {
			return err
		}
		sid = s.ID
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	save := func(from int, msgs ...string) {
		t.Helper()
		if err := db.SaveCheckpoint(ctx, sid, nil, CheckpointWrite{State: `{}`, From: from, Messages: msgs}); err != nil {
			t.Fatal(err)
		}
	}
	claimed := func() string {
		t.Helper()
		cp, err := db.ClaimCheckpoint(ctx, org, sid)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := db.FindTranscript(ctx, org, sid)
		if err != nil || tr.Messages != cp.Messages {
			t.Fatalf("the running session's transcript %v (%v), its checkpoint's %s", tr, err, cp.Messages)
		}
		return cp.Messages
	}
	save(0, `"a"`, `"b"`)
	save(2, `"c"`)
	if got := claimed(); got != `["a","b","c"]` {
		t.Fatalf("after an append: %s", got)
	}
	save(1, `"B"`) // compacted from the second message on; the third is gone
	if got := claimed(); got != `["a","B"]` {
		t.Fatalf("after a rewrite from index 1: %s", got)
	}
	if _, err := db.EndTurn(ctx, sid, TurnEnd{Status: SessionCompleted, Messages: `["a","B","done"]`}); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM run_checkpoint_messages WHERE session_id = ?`, sid).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("checkpoint rows after the turn ended: %d (%v)", rows, err)
	}
	if tr, err := db.FindTranscript(ctx, org, sid); err != nil || tr.Messages != `["a","B","done"]` {
		t.Fatalf("the ended session's transcript: %v (%v)", tr, err)
	}
}
