package store

import (
	"context"
	"strings"
	"testing"
	"time"
)

// The dedupe key is compact, not unique: events whose hashes share it, or
// one body sent to two webhooks, are told apart by the row's real columns;
// the same body to the same webhook within the window is a duplicate.
func TestDedupeKeyCollisions(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	hook := benchWebhook(t, db)
	other := benchWebhook2(t, db, hook)
	base := "0123456789abcde"
	h1 := base + strings.Repeat("1", 49)
	h2 := base + strings.Repeat("2", 49) // same key as h1
	if dedupeKey(h1) != dedupeKey(h2) {
		t.Fatal("the test's hashes should share their key")
	}
	item := func(taskID, hash string) IngestItem {
		return IngestItem{Event: &WebhookEvent{OrgID: hook.OrgID, ProjectID: hook.ProjectID, TaskID: taskID,
			Provider: "generic", Type: "x", BodyHash: hash, Verification: "bearer", Body: []byte("{}"), BodySize: 2},
			DedupeWindow: 60e9}
	}
	// One commit each: the lookups go to the database, not the batch's memory.
	var ids []string
	for i, it := range []IngestItem{item(hook.TaskID, h1), item(hook.TaskID, h2), item(other, h1), item(hook.TaskID, h1),
		item(other, h2)} {
		res, err := db.InsertWebhookEvents(ctx, []IngestItem{it})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Err != nil {
			t.Fatalf("item %d: %v", i, res[0].Err)
		}
		ids = append(ids, res[0].ID)
		want := ""
		if i == 3 {
			want = "dedupe"
		}
		if res[0].Duplicate != want {
			t.Fatalf("item %d: duplicate %q, want %q", i, res[0].Duplicate, want)
		}
	}
	if ids[3] != ids[0] {
		t.Fatalf("the duplicate names %s, want the first event %s", ids[3], ids[0])
	}
}

// Migration 0150 gives the events stored before it their dedupe key in
// SQL: it must be the key ingest computes, or an upgraded database would
// not dedupe against them.
func TestDedupeKeyMigrationMatchesGo(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	files, err := db.migrationFiles()
	if err != nil {
		t.Fatal(err)
	}
	m := files["0150_webhook_dedupe_key.sql"]
	start, end := strings.Index(m, "SET dedupe_key ="), strings.Index(m, "WHERE dedupe_hash IS NOT NULL")
	if start < 0 || end < start {
		t.Fatal("migration 0150: no backfill found")
	}
	expr := m[start+len("SET dedupe_key =") : end]
	hashes := []string{strings.Repeat("0", 64), strings.Repeat("f", 64),
		"0e5406d96136b2387f6e6b17e9fff616d8516405bc0ab5ea48fff2e390d39cda",
		"9a1b2c3d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789abcdef"}
	for _, h := range hashes {
		var got int64
		if err := db.r.QueryRowContext(ctx, `SELECT `+expr+` FROM (SELECT ? AS dedupe_hash) AS t`, h).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if want := dedupeKey(h); got != want {
			t.Errorf("%s: migration gives %d, ingest %d", h, got, want)
		}
	}
}

// benchWebhook2 adds a second webhook (and its task) to hook's project and
// returns its task id.
func benchWebhook2(t *testing.T, db *DB, hook *Webhook) string {
	t.Helper()
	ctx := context.Background()
	w := &Webhook{OrgID: hook.OrgID, ProjectID: hook.ProjectID, Provider: "generic", Scheme: "bearer", Enabled: true,
		RoutingMode: "first_match", RateLimit: 600, RetentionDays: 30, RedactGlobs: []string{}, ApprovalTTL: 86400,
		BadgeToken: "badge2"}
	err := db.Write(ctx, func(tx *Tx) error {
		tk := &Task{OrgID: hook.OrgID, ProjectID: hook.ProjectID, Name: "other", Prompt: "look", Enabled: true,
			MissedFirePolicy: "skip", OverlapPolicy: "queue", Timezone: "UTC", AgentType: "default"}
		return createTaskTx(ctx, tx, tk, func(*Task, time.Time) (*time.Time, error) { w.TaskID = tk.ID; return nil, nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SaveWebhook(ctx, w, nil); err != nil {
		t.Fatal(err)
	}
	return w.TaskID
}
