package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"
)

// One group commit opens incidents, joins them, skips runs and resolves
// one: the rows it writes at its end (webhook_dispatch_flush.go) give the
// same incidents, counters, keys and timelines as row-by-row writes would,
// and an alert's follow-up entries ride on its row but read back as
// entries of their own, in order.
func TestDispatchBatchFlush(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	hook := benchWebhook(t, db)
	// overlap_policy skip: the first event's run is still pending, so every
	// later event of the batch records a skip on its incident.
	if err := db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE tasks SET overlap_policy = 'skip' WHERE id = ?`, hook.TaskID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	event := func(i int, group, fp, status string) IngestItem {
		alerts := fmt.Sprintf(`[{"fingerprint":%q,"status":%q}]`, fp, status)
		e := &WebhookEvent{OrgID: hook.OrgID, ProjectID: hook.ProjectID, TaskID: hook.TaskID, Provider: "alertmanager",
			Type: "alertmanager." + status, BodyHash: fmt.Sprintf("%064d", i), Verification: "bearer", Body: []byte("{}"),
			BodySize: 2, Alerts: alerts}
		c := &Correlation{Keys: []string{"group:" + group}, Window: time.Hour, Title: group, Severity: "warning",
			AlertCount: 1, Fingerprints: []string{fp}, Firing: status == "firing", Alerts: alerts}
		if status == "resolved" {
			c.Transition = IncidentResolved
		}
		plan := &DispatchPlan{Targets: []DispatchTarget{{TargetTaskID: hook.TaskID}}, Correlation: c,
			RenderInput: func() string { return "input " + group }}
		return IngestItem{Event: e, Plan: plan, HookUpdatedAt: hook.UpdatedAt}
	}
	items := []IngestItem{
		event(0, "a", "a1", "firing"),   // opens A, starts the run
		event(1, "b", "b1", "firing"),   // opens B, skipped
		event(2, "a", "a2", "firing"),   // joins A (new alert)
		event(3, "a", "a1", "firing"),   // joins A (known alert)
		event(4, "c", "c1", "firing"),   // opens C, skipped
		event(5, "c", "c1", "resolved"), // resolves C mid-batch
		event(6, "c", "c2", "firing"),   // C's keys are gone: opens C'
	}
	for i := 7; i < 7+70; i++ { // more than one chunk of each size
		items = append(items, event(i, fmt.Sprintf("g%02d", i), "x", "firing"))
	}
	res, err := db.InsertWebhookEvents(ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	incOf := func(i int) string {
		o := res[i].Dispatched
		if o == nil || len(o.Items) == 0 || o.Items[0].Kind != "incident" {
			t.Fatalf("event %d: %+v", i, o)
		}
		return o.Items[0].ID
	}
	a, b, c, c2 := incOf(0), incOf(1), incOf(4), incOf(6)
	if incOf(2) != a || incOf(3) != a || incOf(5) != c || c2 == c || b == a {
		t.Fatalf("correlation: %v %v %v %v %v %v %v", a, b, incOf(2), incOf(3), c, incOf(5), c2)
	}
	if res[0].Dispatched.Status != EventDispatched || res[1].Dispatched.Status != EventSkipped ||
		res[2].Dispatched.Status != EventCorrelated || res[5].Dispatched.Status != EventCorrelated {
		t.Fatalf("statuses: %s %s %s %s", res[0].Dispatched.Status, res[1].Dispatched.Status, res[2].Dispatched.Status,
			res[5].Dispatched.Status)
	}
	run := res[0].Dispatched.Items[1].ID
	incA, tlA, err := db.FindIncident(ctx, hook.OrgID, hook.ProjectID, a)
	if err != nil {
		t.Fatal(err)
	}
	if incA.AlertCount != 2 || incA.EventCount != 3 || incA.SessionID != run || incA.Status != IncidentTriggered {
		t.Fatalf("incident A: %+v", incA)
	}
	kinds := func(tl []TimelineEntry) string {
		var k []string
		for i, e := range tl {
			if i > 0 && e.ID <= tl[i-1].ID {
				t.Fatalf("timeline out of order at %d: %+v", i, tl)
			}
			k = append(k, e.Kind)
		}
		return strings.Join(k, ",")
	}
	if got := kinds(tlA); got != "alert,session,alert,alert" {
		t.Fatalf("timeline of A: %s", got)
	}
	if tlA[1].Text != "agent run of alert" || tlA[1].Data != `{"session_id":"`+run+`"}` || tlA[1].Actor != "" ||
		!tlA[1].At.Equal(tlA[0].At) {
		t.Fatalf("session entry: %+v", tlA[1])
	}
	_, tlB, err := db.FindIncident(ctx, hook.OrgID, hook.ProjectID, b)
	if err != nil {
		t.Fatal(err)
	}
	want := "agent run of alert skipped: the previous run " + run + " was still in progress (overlap_policy skip)"
	if kinds(tlB) != "alert,skipped" || tlB[1].Text != want || tlB[1].Data != `{"session_id":"`+run+`"}` {
		t.Fatalf("timeline of B: %+v", tlB)
	}
	incC, tlC, err := db.FindIncident(ctx, hook.OrgID, hook.ProjectID, c)
	if err != nil {
		t.Fatal(err)
	}
	if incC.Status != IncidentResolved || incC.EventCount != 2 || incC.AlertCount != 1 {
		t.Fatalf("incident C: %+v", incC)
	}
	if got := kinds(tlC); got != "alert,skipped,alert,status" {
		t.Fatalf("timeline of C: %s", got)
	}
	var keys int
	keysOf := `SELECT count(*) FROM (` + correlationKeysSQL + `) AS k WHERE incident_id = ?`
	if err := db.r.QueryRowContext(ctx, keysOf, hook.ProjectID, hook.ProjectID, c).Scan(&keys); err != nil || keys != 0 {
		t.Fatalf("resolved incident's keys: %d (%v)", keys, err)
	}
	if err := db.r.QueryRowContext(ctx, keysOf, hook.ProjectID, hook.ProjectID, c2).Scan(&keys); err != nil || keys != 1 {
		t.Fatalf("new incident's keys: %d (%v)", keys, err)
	}
	var n int
	// Follow-ups rode on their alert's entry, and the first entry on the
	// incident's row (opened_entry): A's four entries are two rows.
	var rows int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM incident_timeline WHERE incident_id = ?`, a).Scan(&rows); err != nil || rows != 2 {
		t.Fatalf("rows of A's timeline: %d (%v)", rows, err)
	}
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM incidents WHERE opened_entry IS NOT NULL`).Scan(&n); err != nil || n != 4+70 {
		t.Fatalf("incidents with their first entry on their row: %d (%v)", n, err)
	}
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM incidents`).Scan(&n); err != nil || n != 4+70 {
		t.Fatalf("incidents: %d (%v)", n, err)
	}
	// The batch's incidents hold their fingerprints on their rows
	// (open_fingerprints), none in incident_alerts.
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM incident_alerts`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("incident alerts: %d (%v)", n, err)
	}
	openFPs := func(id string) (fps string, rows int) {
		var v sql.NullString
		if err := db.r.QueryRowContext(ctx, `SELECT open_fingerprints, (SELECT count(*) FROM incident_alerts WHERE incident_id = ?)
			FROM incidents WHERE id = ?`, id, id).Scan(&v, &rows); err != nil {
			t.Fatal(err)
		}
		return v.String, rows
	}
	if fps, _ := openFPs(a); fps != `["a1","a2"]` {
		t.Fatalf("A's open fingerprints: %s", fps)
	}
	if fps, _ := openFPs(c); fps != `["c1"]` {
		t.Fatalf("C's open fingerprints: %s", fps)
	}
	// A later batch joins A from the database: counters add up, the alert seen before is not counted again.
	res, err = db.InsertWebhookEvents(ctx, []IngestItem{event(100, "a", "a2", "firing"), event(101, "a", "a3", "firing")})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Dispatched.Items[0].ID != a || res[1].Dispatched.Items[0].ID != a {
		t.Fatalf("second batch: %+v %+v", res[0].Dispatched, res[1].Dispatched)
	}
	incA, tlA, err = db.FindIncident(ctx, hook.OrgID, hook.ProjectID, a)
	if err != nil {
		t.Fatal(err)
	}
	if incA.AlertCount != 3 || incA.EventCount != 5 || kinds(tlA) != "alert,session,alert,alert,alert,alert" {
		t.Fatalf("incident A after the second batch: %+v %s", incA, kinds(tlA))
	}
	// The join moved A's open fingerprints into incident_alerts.
	if fps, rows := openFPs(a); fps != "" || rows != 3 {
		t.Fatalf("A after the join: open fingerprints %q, %d alert rows", fps, rows)
	}
	// An incident a batch opens, acknowledges (which writes it at once)
	// and joins again: the join moves what it opened with.
	ack := event(200, "d", "d1", "firing")
	ack.Plan.Correlation.Transition = IncidentAcknowledged
	res, err = db.InsertWebhookEvents(ctx, []IngestItem{event(199, "d", "d1", "firing"), ack, event(201, "d", "d2", "firing"),
		event(202, "d", "d1", "firing")})
	if err != nil {
		t.Fatal(err)
	}
	d := incOf(0)
	incD, _, err := db.FindIncident(ctx, hook.OrgID, hook.ProjectID, d)
	if err != nil {
		t.Fatal(err)
	}
	if incOf(1) != d || incOf(2) != d || incOf(3) != d || incD.Status != IncidentAcknowledged || incD.AlertCount != 2 ||
		incD.EventCount != 4 {
		t.Fatalf("incident D: %+v", incD)
	}
	if fps, rows := openFPs(d); fps != "" || rows != 2 {
		t.Fatalf("D: open fingerprints %q, %d alert rows", fps, rows)
	}
}
