package store

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// A statement prepared again as its uses double (pgdriver_replan.go) keeps
// answering: inside a transaction, with copies of itself still queued
// (pipelined) when it is prepared again, and outside one.
func TestReplannedStatementsKeepAnswering(t *testing.T) {
	db, _ := openTempPG(t)
	ctx := context.Background()
	hook := benchWebhook(t, db)
	alerts := `[{"source":"alertmanager","title":"HighLatency","status":"firing","fingerprint":"fp","group_key":"storm"}]`
	e := &WebhookEvent{OrgID: hook.OrgID, ProjectID: hook.ProjectID, TaskID: hook.TaskID, Provider: "alertmanager",
		Type: "alertmanager.firing", BodyHash: fmt.Sprintf("%064d", 1), Verification: "bearer", Body: []byte("{}"), BodySize: 2, Alerts: alerts}
	plan := &DispatchPlan{Targets: []DispatchTarget{{TargetTaskID: hook.TaskID}},
		Correlation: &Correlation{Keys: []string{"group:storm"}, Window: time.Hour, Title: "HighLatency", Severity: "critical", AlertCount: 1, Firing: true, Alerts: alerts},
		RenderInput: func() string { return "alert" }}
	if _, err := db.InsertWebhookEvents(ctx, []IngestItem{{Event: e, Plan: plan, HookUpdatedAt: hook.UpdatedAt}}); err != nil {
		t.Fatal(err)
	}
	var inc string
	if err := db.r.QueryRowContext(ctx, `SELECT incident_id FROM incident_timeline LIMIT 1`).Scan(&inc); err != nil {
		t.Fatal(err)
	}
	const n = 3*replanFirst + 5 // past two re-preparations
	err := db.Write(ctx, func(tx *Tx) error {
		for i := 0; i < n; i++ {
			// Queued: every copy before a re-preparation runs after it.
			if err := addTimelineTx(ctx, tx, inc, "note", "", fmt.Sprintf("replan %d", i), ""); err != nil {
				return err
			}
		}
		for i := 0; i < n; i++ {
			var got int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM incident_timeline WHERE incident_id = ? AND text = ?`,
				inc, fmt.Sprintf("replan %d", i)).Scan(&got); err != nil || got != 1 {
				return fmt.Errorf("note %d: %d rows, %v", i, got, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		var got int
		if err := db.w.QueryRowContext(ctx, `SELECT count(*) FROM incident_timeline WHERE incident_id = ? AND text LIKE ?`,
			inc, "replan %").Scan(&got); err != nil || got != n {
			t.Fatalf("read %d: %d notes of %d, %v", i, got, n, err)
		}
	}
}
