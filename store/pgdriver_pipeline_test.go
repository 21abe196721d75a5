package store

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Pipelined statements (pgdriver_pipeline.go) behave as if each had been
// answered: the rows of a group commit are all stored and read back in the
// transaction, and a queued statement that fails fails its transaction,
// whether the next query or the commit finds it, and nothing of it stays.
func TestPipelinedStatementsFailTheirTransaction(t *testing.T) {
	db, _ := openTempPG(t)
	ctx := context.Background()
	hook := benchWebhook(t, db)
	alerts := `[{"source":"alertmanager","title":"HighLatency","status":"firing","fingerprint":"fp","group_key":"storm"}]`
	var items []IngestItem
	for i := 0; i < 40; i++ {
		e := &WebhookEvent{OrgID: hook.OrgID, ProjectID: hook.ProjectID, TaskID: hook.TaskID, Provider: "alertmanager",
			Type: "alertmanager.firing", BodyHash: fmt.Sprintf("%064d", i), Verification: "bearer", Body: []byte("{}"), BodySize: 2, Alerts: alerts}
		plan := &DispatchPlan{Targets: []DispatchTarget{{TargetTaskID: hook.TaskID}},
			Correlation: &Correlation{Keys: []string{"group:storm"}, Window: time.Hour, Title: "HighLatency", Severity: "critical", AlertCount: 1, Firing: true, Alerts: alerts},
			RenderInput: func() string { return "alert" }}
		items = append(items, IngestItem{Event: e, Plan: plan, HookUpdatedAt: hook.UpdatedAt})
	}
	res, err := db.InsertWebhookEvents(ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	count := func(table string) int {
		var n int
		if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count("webhook_events"); n != 40 || res[39].ID == "" {
		t.Fatalf("%d events stored of 40", n)
	}
	timeline := count("incident_timeline")
	// The incident's first entry is on its row (opened_entry, migration 0158).
	if first := count("incidents WHERE opened_entry IS NOT NULL"); timeline+first < 40 {
		t.Fatalf("%d timeline entries (%d rows) for 40 correlated alerts", timeline+first, timeline)
	}
	// Queued, then read back inside the transaction.
	err = db.Write(ctx, func(tx *Tx) error {
		var inc string
		if err := tx.QueryRowContext(ctx, `SELECT incident_id FROM incident_timeline LIMIT 1`).Scan(&inc); err != nil {
			return err
		}
		if err := addTimelineTx(ctx, tx, inc, "note", "", "seen", ""); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM incident_timeline WHERE text = 'seen'`).Scan(&n); err != nil || n != 1 {
			return fmt.Errorf("the queued row read back: %d %v", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A queued statement that fails: found by the next query...
	err = db.Write(ctx, func(tx *Tx) error {
		if err := addTimelineTx(ctx, tx, "no-such-incident", "note", "", "orphan", ""); err != nil {
			return fmt.Errorf("answered at once: %w", err)
		}
		var n int
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM incident_timeline`).Scan(&n)
	})
	if err == nil {
		t.Fatal("a failed queued insert did not fail the next query")
	}
	// ...or by the commit, which then stores nothing of the transaction.
	err = db.Write(ctx, func(tx *Tx) error {
		var inc string
		if err := tx.QueryRowContext(ctx, `SELECT incident_id FROM incident_timeline LIMIT 1`).Scan(&inc); err != nil {
			return err
		}
		if err := addTimelineTx(ctx, tx, inc, "note", "", "kept?", ""); err != nil {
			return err
		}
		return addTimelineTx(ctx, tx, "no-such-incident", "note", "", "orphan", "")
	})
	if err == nil {
		t.Fatal("a failed queued insert did not fail the commit")
	}
	if n := count("incident_timeline"); n != timeline+1 {
		t.Fatalf("timeline %d after the failed transactions, want %d", n, timeline+1)
	}
	// The writer connection is usable afterwards.
	if err := db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE incidents SET title = title`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
