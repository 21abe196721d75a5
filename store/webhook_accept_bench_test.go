package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"testing"
	"time"
)

// BenchmarkIngestAccept measures the writer's share of accepting a delivery
// without its dispatch (the events wait for the dispatcher): the webhook
// check, the 60 s dedupe lookup over distinct bodies, the INSERT and the
// synced commit, in batches of 128 as the ingest writer forms them under
// load, over a table that keeps growing as in a sustained run.
//
//	go test ./store -run '^$' -bench IngestAccept -benchtime 100000x
func BenchmarkIngestAccept(b *testing.B) {
	db, _ := openTemp(b)
	ctx := context.Background()
	hook := benchWebhook(b, db)
	body := make([]byte, 700)
	for i := range body {
		body[i] = 'x'
	}
	alerts := `[{"source":"alertmanager","title":"Disk","severity":"warning","status":"firing","fingerprint":"fp","labels":{"alertname":"Disk","instance":"db-1"},"starts_at":"2026-11-23T10:00:00Z","summary":"disk filling"}]`
	const batch = 128
	items := make([]IngestItem, 0, batch)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i += batch {
		items = items[:0]
		for j := i; j < min(i+batch, b.N); j++ {
			sum := sha256.Sum256([]byte(strconv.Itoa(j)))
			e := &WebhookEvent{OrgID: hook.OrgID, ProjectID: hook.ProjectID, TaskID: hook.TaskID, Provider: "alertmanager",
				Type: "alertmanager.firing", BodyHash: hex.EncodeToString(sum[:]), Verification: "bearer", Body: body,
				BodySize: len(body), Headers: `{"content-type":"application/json","user-agent":"wrk"}`, Alerts: alerts}
			items = append(items, IngestItem{Event: e, DedupeWindow: time.Minute, HookUpdatedAt: hook.UpdatedAt})
		}
		res, err := db.InsertWebhookEvents(ctx, items)
		if err != nil {
			b.Fatal(err)
		}
		if res[0].Duplicate != "" || res[0].Err != nil {
			b.Fatalf("not stored: %+v", res[0])
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/event")
}
