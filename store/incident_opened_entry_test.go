package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// openedEntryToRow rewrites an incident's first timeline entry the way it
// was stored before migration 0158: an incident_timeline row (with its
// follow-ups in follow) and no opened_entry.
func openedEntryToRow(t *testing.T, db *DB, incidentID string) {
	t.Helper()
	ctx := context.Background()
	if err := db.Write(ctx, func(tx *Tx) error {
		var entry sql.NullString
		var at, title string
		if err := tx.QueryRowContext(ctx, `SELECT opened_entry, opened_at, title FROM incidents WHERE id = ?`, incidentID).Scan(&entry,
			&at, &title); err != nil {
			return err
		}
		if !entry.Valid {
			return fmt.Errorf("incident %s has no opened_entry", incidentID)
		}
		var e struct {
			ID           string
			Data, Follow json.RawMessage
		}
		if err := json.Unmarshal([]byte(entry.String), &e); err != nil {
			return err
		}
		var follow any
		if e.Follow != nil {
			follow = string(e.Follow)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO incident_timeline (id, incident_id, at, kind, actor, text, data, follow)
			VALUES (?, ?, ?, 'alert', NULL, ?, ?, ?)`, e.ID, incidentID, at, title, string(e.Data), follow); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE incidents SET opened_entry = NULL WHERE id = ?`, incidentID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// stormItem is an Alertmanager event of one alert of group in hook's task.
func stormItem(hook *Webhook, i int, group, fp string) IngestItem {
	alerts := fmt.Sprintf(`[{"fingerprint":%q,"status":"firing","labels":{"alertname":"A \"quoted\" <b>"}}]`, fp)
	e := &WebhookEvent{OrgID: hook.OrgID, ProjectID: hook.ProjectID, TaskID: hook.TaskID, Provider: "alertmanager",
		Type: "alertmanager.firing", BodyHash: fmt.Sprintf("%064d", i), Verification: "bearer", Body: []byte("{}"),
		BodySize: 2, Alerts: alerts}
	c := &Correlation{Keys: []string{"group:" + group}, Window: time.Hour, Title: "Title of " + group + " \"é\"",
		Severity: "warning", AlertCount: 1, Fingerprints: []string{fp}, Firing: true, Alerts: alerts}
	plan := &DispatchPlan{Targets: []DispatchTarget{{TargetTaskID: hook.TaskID}}, Correlation: c,
		RenderInput: func() string { return "input " + group }}
	return IngestItem{Event: e, Plan: plan, HookUpdatedAt: hook.UpdatedAt}
}

// An incident's first entry on its row (opened_entry) reads back as the
// row it was before migration 0158: the same entries in the same order,
// wherever the other rows fall around it (same time with a smaller or
// larger id, earlier), and the 1000-entry limit still holds.
func TestOpenedEntryReadsAsItsRow(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	hook := benchWebhook(t, db)
	if err := db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE tasks SET overlap_policy = 'skip' WHERE id = ?`, hook.TaskID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// A opens with a run, B with a skip; A is joined in the same batch.
	items := []IngestItem{stormItem(hook, 0, "a", "a1"), stormItem(hook, 1, "b", "b1"), stormItem(hook, 2, "a", "a2"),
		stormItem(hook, 3, "c", "c1"), stormItem(hook, 4, "d", "d1")}
	res, err := db.InsertWebhookEvents(ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for i, g := range []string{"a", "b", "a", "c", "d"} {
		ids[g] = res[i].Dispatched.Items[0].ID
	}
	// A later batch joins A, a note and an acknowledgement follow.
	if _, err := db.InsertWebhookEvents(ctx, []IngestItem{stormItem(hook, 10, "a", "a3")}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AnnotateIncident(ctx, hook.OrgID, hook.ProjectID, ids["a"], "", "looking"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.TransitionIncident(ctx, hook.OrgID, hook.ProjectID, ids["a"], IncidentAcknowledged, "", ""); err != nil {
		t.Fatal(err)
	}
	// Rows at the first entry's own time around it (a clock that did not
	// move, a smaller or a larger id) and one before it (a clock stepped
	// back): the read places them by (at, id) as before.
	var openedAt string
	if err := db.r.QueryRowContext(ctx, `SELECT opened_at FROM incidents WHERE id = ?`, ids["b"]).Scan(&openedAt); err != nil {
		t.Fatal(err)
	}
	if err := db.Write(ctx, func(tx *Tx) error {
		for _, r := range []struct{ id, at string }{{"00000000-0000-7000-8000-000000000000", openedAt},
			{"ffffffff-ffff-7fff-bfff-ffffffffffff", openedAt}, {NewID(), "2000-01-01T00:00:00.000000Z"}} {
			if _, err := tx.ExecContext(ctx, insertTimeline, r.id, ids["b"], r.at, "note", "someone", "at "+r.at, "{}"); err != nil {
				return err
			}
		}
		// C: more entries than the limit, the first on the row.
		for i := 0; i < 1005; i++ {
			if err := addTimelineTx(ctx, tx, ids["c"], "note", "", fmt.Sprintf("note %04d", i), ""); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"a", "b", "c", "d"} {
		_, onRow, err := db.FindIncident(ctx, hook.OrgID, hook.ProjectID, ids[g])
		if err != nil {
			t.Fatal(err)
		}
		openedEntryToRow(t, db, ids[g])
		_, asRows, err := db.FindIncident(ctx, hook.OrgID, hook.ProjectID, ids[g])
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(onRow, asRows) {
			t.Fatalf("incident %s: timeline with the first entry on the row\n%+v\nas a row\n%+v", g, onRow, asRows)
		}
		var kinds []string
		for _, e := range onRow {
			kinds = append(kinds, e.Kind)
		}
		got := strings.Join(kinds, ",")
		switch g {
		case "a":
			if got != "alert,session,alert,alert,note,status" {
				t.Fatalf("A: %s", got)
			}
		case "b":
			if got != "note,note,alert,skipped,note" || onRow[0].Text != "at 2000-01-01T00:00:00.000000Z" {
				t.Fatalf("B: %s %+v", got, onRow)
			}
		case "c":
			if len(onRow) != 1000 || got[:len("alert,skipped,note")] != "alert,skipped,note" || onRow[999].Text != "note 0997" {
				t.Fatalf("C: %d entries, last %+v", len(onRow), onRow[len(onRow)-1])
			}
		}
	}
}

// Incidents stored before migration 0158 (their first entry a row) read
// back the same after it, byte for byte, and keep working: a later batch
// joins them, a note lands after their entries, and incidents opened
// since carry their first entry on their row.
func TestOpenedEntryAfterUpgrade(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	hook := benchWebhook(t, db)
	res, err := db.InsertWebhookEvents(ctx, []IngestItem{stormItem(hook, 0, "a", "a1"), stormItem(hook, 1, "b", "b1"),
		stormItem(hook, 2, "a", "a2")})
	if err != nil {
		t.Fatal(err)
	}
	a, b := res[0].Dispatched.Items[0].ID, res[1].Dispatched.Items[0].ID
	before := incidentSnapshot(t, db, hook.OrgID, hook.ProjectID, a, b)
	// The database as the schema before 0158 stored it.
	openedEntryToRow(t, db, a)
	openedEntryToRow(t, db, b)
	if err := db.Write(ctx, func(tx *Tx) error {
		for _, q := range []string{`ALTER TABLE incidents DROP COLUMN opened_entry`,
			`DELETE FROM schema_migrations WHERE name = '0158_incident_opened_entry.sql'`} {
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
	if after := incidentSnapshot(t, db, hook.OrgID, hook.ProjectID, a, b); after != before {
		t.Fatalf("after migration 0158:\n%s\nwant\n%s", after, before)
	}
	res, err = db.InsertWebhookEvents(ctx, []IngestItem{stormItem(hook, 10, "a", "a3"), stormItem(hook, 11, "c", "c1")})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Dispatched.Items[0].ID != a {
		t.Fatalf("joined %s, want %s", res[0].Dispatched.Items[0].ID, a)
	}
	if _, err := db.AnnotateIncident(ctx, hook.OrgID, hook.ProjectID, a, "", "looking"); err != nil {
		t.Fatal(err)
	}
	_, tl, err := db.FindIncident(ctx, hook.OrgID, hook.ProjectID, a)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range tl {
		kinds = append(kinds, e.Kind)
	}
	if got := strings.Join(kinds, ","); got != "alert,session,alert,alert,note" {
		t.Fatalf("timeline of A after the upgrade: %s", got)
	}
	var onRow int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM incidents WHERE opened_entry IS NOT NULL`).Scan(&onRow); err != nil || onRow != 1 {
		t.Fatalf("incidents with their first entry on their row: %d (%v), want the one opened since", onRow, err)
	}
}

// The move to PostgreSQL (CopyTo) carries an incident's first entry with
// its row: its timeline reads the same on PostgreSQL, and the copy's row
// counts match table by table.
func TestCopyToKeepsOpenedEntry(t *testing.T) {
	pg, _ := openTempPG(t)
	ctx := context.Background()
	lite, err := Open(ctx, filepath.Join(t.TempDir(), "opsagent.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	hook := benchWebhook(t, lite)
	res, err := lite.InsertWebhookEvents(ctx, []IngestItem{stormItem(hook, 0, "a", "a1"), stormItem(hook, 1, "b", "b1"),
		stormItem(hook, 2, "a", "a2")})
	if err != nil {
		t.Fatal(err)
	}
	a, b := res[0].Dispatched.Items[0].ID, res[1].Dispatched.Items[0].ID
	if _, err := lite.AnnotateIncident(ctx, hook.OrgID, hook.ProjectID, a, "", "looking"); err != nil {
		t.Fatal(err)
	}
	before := incidentSnapshot(t, lite, hook.OrgID, hook.ProjectID, a, b)
	rep, err := lite.CopyTo(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("copy: %v", rep.Mismatch)
	}
	if after := incidentSnapshot(t, pg, hook.OrgID, hook.ProjectID, a, b); after != before {
		t.Fatalf("on PostgreSQL:\n%s\nwant\n%s", after, before)
	}
}
