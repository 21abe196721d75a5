package store

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// incidentSnapshot is what the incident API serves of an incident (its row
// and timeline, FindIncident) and of the project's list (FindIncidents),
// as JSON: equal snapshots are the same bytes on the wire.
func incidentSnapshot(t *testing.T, db *DB, orgID, projectID string, ids ...string) string {
	t.Helper()
	ctx := context.Background()
	var out []any
	for _, id := range ids {
		inc, tl, err := db.FindIncident(ctx, orgID, projectID, id)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, inc, tl)
	}
	list, total, err := db.FindIncidents(ctx, IncidentFilter{OrgID: orgID, ProjectID: projectID, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(append(out, list, total))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Migration 0153 (incident_timeline keyed by incident, at, id; the
// project's incidents indexed by status without the last alert) changes no
// answer: incidents opened, joined, skipped, annotated and resolved read
// back the same, byte for byte, from the schema before it (the table
// rebuilt as it was, the migration forgotten), and again once the
// migration has run on that database; new entries then land after the
// migrated ones.
func TestIncidentTimelineAfterUpgrade(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	hook := benchWebhook(t, db)
	if err := db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE tasks SET overlap_policy = 'skip' WHERE id = ?`, hook.TaskID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	n := 0
	event := func(group, fp, status string) IngestItem {
		n++
		alerts := fmt.Sprintf(`[{"fingerprint":%q,"status":%q,"labels":{"alertname":"<%s>"}}]`, fp, status, group)
		e := &WebhookEvent{OrgID: hook.OrgID, ProjectID: hook.ProjectID, TaskID: hook.TaskID, Provider: "alertmanager",
			Type: "alertmanager." + status, BodyHash: fmt.Sprintf("%064d", n), Verification: "bearer", Body: []byte("{}"),
			BodySize: 2, Alerts: alerts}
		c := &Correlation{Keys: []string{"group:" + group}, Window: time.Hour, Title: "disk " + group, Severity: "warning",
			AlertCount: 1, Fingerprints: []string{fp}, Firing: status == "firing", Alerts: alerts}
		if status == "resolved" {
			c.Transition = IncidentResolved
		}
		plan := &DispatchPlan{Targets: []DispatchTarget{{TargetTaskID: hook.TaskID}}, Correlation: c,
			RenderInput: func() string { return "input " + group }}
		return IngestItem{Event: e, Plan: plan, HookUpdatedAt: hook.UpdatedAt}
	}
	ingest := func(items ...IngestItem) []string {
		t.Helper()
		res, err := db.InsertWebhookEvents(ctx, items)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range res {
			if r.Err != nil || r.Dispatched == nil || len(r.Dispatched.Items) == 0 {
				t.Fatalf("event: %+v", r)
			}
			ids = append(ids, r.Dispatched.Items[0].ID)
		}
		return ids
	}
	ids := ingest(event("a", "a1", "firing"), event("b", "b1", "firing"), event("a", "a2", "firing"),
		event("c", "c1", "firing"), event("c", "c1", "resolved"))
	a, b, c := ids[0], ids[1], ids[3]
	ingest(event("a", "a3", "firing"), event("b", "b1", "firing"))
	if _, err := db.AnnotateIncident(ctx, hook.OrgID, hook.ProjectID, a, "", "looking at the disks"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.TransitionIncident(ctx, hook.OrgID, hook.ProjectID, b, IncidentAcknowledged, "", ""); err != nil {
		t.Fatal(err)
	}
	before := incidentSnapshot(t, db, hook.OrgID, hook.ProjectID, a, b, c)

	// The schema before 0153, with the rows stored so far.
	downgrade := []string{
		`CREATE TABLE incident_timeline_old (id TEXT PRIMARY KEY,
			incident_id TEXT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE, at TEXT NOT NULL, kind TEXT NOT NULL,
			actor TEXT, text TEXT NOT NULL DEFAULT '', data TEXT NOT NULL DEFAULT '{}', follow TEXT)`,
		`INSERT INTO incident_timeline_old SELECT id, incident_id, at, kind, actor, text, data, follow FROM incident_timeline`,
		`DROP TABLE incident_timeline`,
		`ALTER TABLE incident_timeline_old RENAME TO incident_timeline`,
		`CREATE INDEX incident_timeline_incident ON incident_timeline(incident_id, at)`,
		`DROP INDEX incidents_project`,
		`CREATE INDEX incidents_project ON incidents(project_id, status, last_alert_at)`,
	}
	if db.pg {
		downgrade = []string{
			`ALTER TABLE incident_timeline DROP CONSTRAINT incident_timeline_pkey`,
			`ALTER TABLE incident_timeline ADD PRIMARY KEY (id)`,
			`CREATE INDEX incident_timeline_incident ON incident_timeline(incident_id, at)`,
			`DROP INDEX incidents_project`,
			`CREATE INDEX incidents_project ON incidents(project_id, status, last_alert_at)`,
		}
	}
	downgrade = append(downgrade, `DELETE FROM schema_migrations WHERE name = '0153_incident_timeline_by_incident.sql'`)
	if err := db.Write(ctx, func(tx *Tx) error {
		for _, q := range downgrade {
			if _, err := tx.Tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if old := incidentSnapshot(t, db, hook.OrgID, hook.ProjectID, a, b, c); old != before {
		t.Fatalf("read from the schema before 0153:\n%s\nwant\n%s", old, before)
	}
	if err := db.migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if after := incidentSnapshot(t, db, hook.OrgID, hook.ProjectID, a, b, c); after != before {
		t.Fatalf("after migration 0153:\n%s\nwant\n%s", after, before)
	}
	if got := ingest(event("a", "a4", "firing")); got[0] != a {
		t.Fatalf("joined %s, want %s", got[0], a)
	}
	_, tl, err := db.FindIncident(ctx, hook.OrgID, hook.ProjectID, a)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range tl {
		kinds = append(kinds, e.Kind)
	}
	if got := fmt.Sprint(kinds); got != "[alert session alert alert note alert]" {
		t.Fatalf("timeline of A after the upgrade: %s", got)
	}
}
