package store

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"
)

// A database upgraded across migrations 0150 (the dedupe key) and 0151
// (incident_keys WITHOUT ROWID) dedupes against the events and correlates
// with the incidents it stored before: the first event is stored, the
// schema taken back to what it was before 0150, and the migrations run
// again on it.
func TestIngestAfterUpgrade(t *testing.T) {
	sqliteOnly(t) // the rebuild of incident_keys is SQLite's; TestDedupeKeyMigrationMatchesGo covers PostgreSQL's backfill
	db, _ := openTemp(t)
	ctx := context.Background()
	hook := benchWebhook(t, db)
	item := func(body, group string) IngestItem {
		alerts := `[{"fingerprint":"` + group + `","status":"firing"}]`
		e := &WebhookEvent{OrgID: hook.OrgID, ProjectID: hook.ProjectID, TaskID: hook.TaskID, Provider: "alertmanager",
			Type: "alertmanager.firing", BodyHash: fmt.Sprintf("%x", sha256.Sum256([]byte(body))), Verification: "bearer",
			Body: []byte(body), BodySize: len(body), Alerts: alerts}
		c := &Correlation{Keys: []string{"group:" + group}, Window: time.Hour, Title: group, Severity: "warning",
			AlertCount: 1, Fingerprints: []string{group}, Firing: true, Alerts: alerts}
		plan := &DispatchPlan{Targets: []DispatchTarget{{TargetTaskID: hook.TaskID}}, Correlation: c}
		return IngestItem{Event: e, Plan: plan, HookUpdatedAt: hook.UpdatedAt, DedupeWindow: time.Hour}
	}
	ingest := func(it IngestItem) IngestResult {
		t.Helper()
		res, err := db.InsertWebhookEvents(ctx, []IngestItem{it})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Err != nil {
			t.Fatal(res[0].Err)
		}
		return res[0]
	}
	first := ingest(item("body one", "g1"))
	if first.Dispatched == nil || len(first.Dispatched.Items) == 0 || first.Dispatched.Items[0].Kind != "incident" {
		t.Fatalf("first event: %+v", first.Dispatched)
	}
	incident := first.Dispatched.Items[0].ID
	// The schema before 0150 and 0151, with the rows stored so far.
	if err := db.Write(ctx, func(tx *Tx) error {
		for _, q := range []string{
			`DROP INDEX webhook_events_dedupe_key`,
			`ALTER TABLE webhook_events ADD COLUMN dedupe_hash TEXT`,
			`UPDATE webhook_events SET dedupe_hash = body_hash WHERE dedupe_key IS NOT NULL`,
			`ALTER TABLE webhook_events DROP COLUMN dedupe_key`,
			`CREATE INDEX webhook_events_dedupe ON webhook_events(task_id, dedupe_hash, received_at) WHERE dedupe_hash IS NOT NULL`,
			`CREATE TABLE incident_keys_old (project_id TEXT NOT NULL, key TEXT NOT NULL,
				incident_id TEXT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE, PRIMARY KEY (project_id, key, incident_id))`,
			`INSERT INTO incident_keys_old SELECT project_id, key, incident_id FROM incident_keys`,
			`DROP TABLE incident_keys`,
			`ALTER TABLE incident_keys_old RENAME TO incident_keys`,
			`DELETE FROM schema_migrations WHERE name IN ('0150_webhook_dedupe_key.sql', '0151_incident_keys_without_rowid.sql')`,
		} {
			if _, err := tx.Tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if dup := ingest(item("body one", "g1")); dup.Duplicate != "dedupe" || dup.ID != first.ID {
		t.Fatalf("the same body after the upgrade: %+v, want a duplicate of %s", dup, first.ID)
	}
	joined := ingest(item("body two", "g1"))
	if joined.Duplicate != "" || joined.Dispatched == nil || joined.Dispatched.Status != EventCorrelated ||
		joined.Dispatched.Items[0].ID != incident {
		t.Fatalf("the same group after the upgrade: %+v, want it to join %s", joined.Dispatched, incident)
	}
}
