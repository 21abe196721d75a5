package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/store"
)

// insertSession writes a finished (or running) session with a transcript
// and two events, ended at `ended` (nil: still running).
func insertSession(t *testing.T, env *testEnv, org, project, status string, created time.Time, ended *time.Time) string {
	t.Helper()
	id := store.NewID()
	err := env.DB.Write(context.Background(), func(tx *store.Tx) error {
		var endedAt any
		if ended != nil {
			endedAt = store.TS(*ended)
		}
		if _, err := tx.Exec(`INSERT INTO agent_sessions (id, org_id, project_id, source, trigger_source, status, started_at, ended_at, created_at, updated_at, last_activity)
			VALUES (?, ?, ?, 'webchat', 'manual', ?, ?, ?, ?, ?, ?)`, id, org, project, status, store.TS(created), endedAt, store.TS(created), store.TS(created), store.TS(created)); err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO session_transcripts (session_id, messages, updated_at) VALUES (?, '[]', ?)`, id, store.TS(created)); err != nil {
			return err
		}
		for seq := 1; seq <= 2; seq++ {
			if _, err := tx.Exec(`INSERT INTO session_events (session_id, seq, type, data, created_at) VALUES (?, ?, 'delta', '{}', ?)`, id, seq, store.TS(created)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func countWhere(t *testing.T, env *testEnv, query string, args ...any) int {
	t.Helper()
	var n int
	if err := env.DB.Reader().QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Retention removes exactly what expired under each org's policy, archives
// old audit events into a segment that verifies on its own, and leaves the
// stored chain verifiable from its anchor, also after new events.
func TestRetentionDeletesExactlyWhatExpired(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup, func(c *server.Config) {
		c.RetentionTranscriptsDays, c.RetentionSessionsDays, c.RetentionAuditDays, c.RetentionOutboxDays = 90, 365, 30, 30
	})
	keep := env.newTenant(t, "keep")       // defaults
	forever := env.newTenant(t, "forever") // keeps its audit log forever
	forever.owner.must(200, "PUT", "/api/organizations/"+forever.org+"/retention", map[string]any{"audit_days": 0, "sessions_days": 0})
	wantValidation(t, keep.owner.do("PUT", "/api/organizations/"+keep.org+"/retention", map[string]any{"audit_days": -1}), "body", "audit_days")
	keep.byRole["viewer"].must(403, "PUT", "/api/organizations/"+keep.org+"/retention", map[string]any{"audit_days": 5})
	got := keep.owner.must(200, "GET", "/api/organizations/"+keep.org+"/retention", nil).JSON()
	if got["audit_days"].(float64) != 30 || got["source"].(map[string]any)["audit_days"] != "default" {
		t.Errorf("retention = %v", got)
	}
	// Flush the batched audit writer, and remember how long the chains are.
	keep.owner.must(200, "GET", "/api/audit-logs?limit=1", nil)
	forever.owner.must(200, "GET", "/api/audit-logs?limit=1", nil)
	keepEvents := countWhere(t, env, `SELECT count(*) FROM audit_events WHERE org_id = ?`, keep.org)
	foreverEvents := countWhere(t, env, `SELECT count(*) FROM audit_events WHERE org_id = ?`, forever.org)

	// Sixty days later.
	env.UseClock()
	env.Advance(60 * 24 * time.Hour)
	now := env.clock()
	days := func(n int) time.Time { return now.Add(-time.Duration(n) * 24 * time.Hour) }
	ptr := func(t time.Time) *time.Time { return &t }
	gone := insertSession(t, env, keep.org, keep.project, "completed", days(401), ptr(days(400)))       // past 365: deleted
	stripped := insertSession(t, env, keep.org, keep.project, "failed", days(101), ptr(days(100)))      // past 90: transcript goes
	recent := insertSession(t, env, keep.org, keep.project, "completed", days(11), ptr(days(10)))       // kept whole
	running := insertSession(t, env, keep.org, keep.project, "running", days(400), nil)                 // never ended: kept
	kept := insertSession(t, env, forever.org, forever.project, "completed", days(401), ptr(days(400))) // sessions forever, transcripts default 90

	outbox := env.Cfg.Path("outbox")
	old, fresh := filepath.Join(outbox, "old.eml"), filepath.Join(outbox, "fresh.eml")
	for _, f := range []string{old, fresh} {
		if err := os.WriteFile(f, []byte("Subject: hi\r\n\r\nhi\r\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(outbox)
	for _, e := range entries { // invitation mail and fresh.eml: written "now"
		_ = os.Chtimes(filepath.Join(outbox, e.Name()), now, now)
	}
	_ = os.Chtimes(old, days(31), days(31))

	rep, err := env.Srv.RunRetention(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sessions != 1 || rep.Transcripts != 3 || rep.AuditArchived != keepEvents || rep.OutboxFiles != 1 {
		t.Errorf("report = %+v, want 1 session, 3 transcripts (gone's went first, then stripped and kept), %d audit events, 1 mail", rep, keepEvents)
	}
	for id, want := range map[string][2]int{gone: {0, 0}, stripped: {1, 0}, recent: {1, 2}, running: {1, 2}, kept: {1, 0}} {
		sessions := countWhere(t, env, `SELECT count(*) FROM agent_sessions WHERE id = ?`, id)
		events := countWhere(t, env, `SELECT count(*) FROM session_events WHERE session_id = ?`, id)
		if sessions != want[0] || events != want[1] {
			t.Errorf("session %s: %d rows and %d events, want %v", id, sessions, events, want)
		}
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("old mail kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh mail removed: %v", err)
	}
	if n := countWhere(t, env, `SELECT count(*) FROM audit_events WHERE org_id = ?`, forever.org); n < foreverEvents {
		t.Errorf("the forever org lost audit events: %d < %d", n, foreverEvents)
	}

	// The archive segment verifies on its own and ends at the anchor.
	anchor, err := env.DB.GetAuditAnchor(context.Background(), keep.org)
	if err != nil || anchor == nil || anchor.Seq != int64(keepEvents) {
		t.Fatalf("anchor = %+v (%v)", anchor, err)
	}
	f, err := os.Open(filepath.Join(env.Dir, anchor.Segment))
	if err != nil {
		t.Fatal(err)
	}
	prev, lines := store.GenesisHash, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var raw map[string]any
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			t.Fatal(err)
		}
		rec := &store.AuditRecord{ID: raw["id"].(string), OrgID: raw["org_id"].(string), Seq: int64(raw["seq"].(float64)),
			ProjectID: raw["project_id"].(string), ActorUserID: raw["actor_user_id"].(string), ActorKeyID: raw["actor_key_id"].(string),
			Action: raw["action"].(string), Outcome: raw["outcome"].(string), TargetType: raw["target_type"].(string),
			TargetID: raw["target_id"].(string), IP: raw["ip"].(string), UserAgent: raw["user_agent"].(string),
			Detail: raw["detail"].(string), CreatedAt: store.ParseTS(raw["created_at"].(string)), PrevHash: raw["prev_hash"].(string)}
		if rec.PrevHash != prev || store.AuditHash(rec) != raw["hash"] {
			t.Fatalf("segment line %d does not chain: %s", lines+1, sc.Text())
		}
		prev = raw["hash"].(string)
		lines++
	}
	f.Close()
	if lines != keepEvents || prev != anchor.Hash {
		t.Errorf("segment: %d lines ending at %s; anchor %+v", lines, prev, anchor)
	}

	// The stored chain verifies from the anchor, also once new events follow it.
	keepOwner := env.login(keep.owner.Email, "correct horse battery") // the old tokens expired in those sixty days
	foreverOwner := env.login(forever.owner.Email, "correct horse battery")
	keepOwner.must(200, "PUT", "/api/me/preferences/theme", map[string]any{"value": "dark"})
	for _, c := range []*client{keepOwner, foreverOwner} {
		if v := c.must(200, "GET", "/api/audit-logs/verify", nil).JSON(); v["ok"] != true {
			t.Errorf("verify after retention: %v", v)
		}
	}
	if n := countWhere(t, env, `SELECT min(seq) FROM audit_events WHERE org_id = ?`, keep.org); n != keepEvents+1 {
		t.Errorf("the next event has seq %d, want %d", n, keepEvents+1)
	}
	// A second run finds nothing more to do.
	if rep, err := env.Srv.RunRetention(context.Background()); err != nil || rep.Sessions+rep.Transcripts+rep.AuditArchived+rep.OutboxFiles != 0 {
		t.Errorf("second run: %+v %v", rep, err)
	}
}
