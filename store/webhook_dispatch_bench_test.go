package store

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"
)

// BenchmarkIngestDistinctGroups is the ingest row's load in process: batches
// of 64 Alertmanager events, each a distinct alert group, stored and
// dispatched in one group commit each: every event opens an incident, and
// under overlap_policy skip all but the first record a skip on it. Body
// hashes are random, as real ones (the dedupe index takes them in no order).
//
//	go test ./store -run '^$' -bench IngestDistinctGroups -benchtime 20000x
func BenchmarkIngestDistinctGroups(b *testing.B) {
	db, _ := openTemp(b)
	ctx := context.Background()
	hook := benchWebhook(b, db)
	if err := db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE tasks SET overlap_policy = 'skip' WHERE id = ?`, hook.TaskID)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 494)
	for i := range body {
		body[i] = 'x'
	}
	const batch = 64
	items := make([]IngestItem, 0, batch)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i += batch {
		items = items[:0]
		for j := i; j < min(i+batch, b.N); j++ {
			id := fmt.Sprintf("run1-0-%d", j)
			alerts := `[{"source":"alertmanager","title":"Disk` + id + `","severity":"warning","status":"firing","fingerprint":"` + id +
				`","group_key":"{}:{alertname=\"Disk` + id + `\"}","labels":{"alertname":"Disk` + id + `","instance":"db-` + id +
				`"},"links":[],"starts_at":"2026-11-23T10:00:00Z","summary":"disk filling"}]`
			e := &WebhookEvent{OrgID: hook.OrgID, ProjectID: hook.ProjectID, TaskID: hook.TaskID, Provider: "alertmanager",
				Type: "alertmanager.firing", BodyHash: fmt.Sprintf("%x", sha256.Sum256([]byte(id))), Verification: "bearer", Body: body,
				BodySize: len(body), Headers: `{"content-type":"application/json","user-agent":"wrk"}`, Alerts: alerts}
			plan := &DispatchPlan{Targets: []DispatchTarget{{TargetTaskID: hook.TaskID}},
				Correlation: &Correlation{Keys: []string{`group:{}:{alertname="Disk` + id + `"}`}, Window: time.Hour,
					Title: "Disk" + id, Severity: "warning", AlertCount: 1, Fingerprints: []string{id}, Firing: true, Alerts: alerts},
				RenderInput: func() string { return "alert " + alerts }}
			items = append(items, IngestItem{Event: e, Plan: plan, HookUpdatedAt: hook.UpdatedAt, DedupeWindow: time.Minute})
		}
		res, err := db.InsertWebhookEvents(ctx, items)
		if err != nil {
			b.Fatal(err)
		}
		if res[0].Dispatched == nil {
			b.Fatal("not dispatched in the ingest transaction")
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/event")
}
