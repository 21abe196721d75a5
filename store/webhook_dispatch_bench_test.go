package store

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchCheckpointEvery makes BenchmarkIngestDistinctGroups checkpoint after
// every that many batches itself, instead of the background checkpointer
// (whose passes depend on timing): the work done per event is then the
// same from run to run, so instruction counts compare (callgrind).
var benchCheckpointEvery = flag.Int("bench.checkpoint-every", 0, "checkpoint after every n batches (0: in the background)")

// benchBatch is BenchmarkIngestDistinctGroups' group commit size: 64 is a
// busy writer's batch, a few events a quiet one's (64 connections).
var benchBatch = flag.Int("bench.batch", 64, "events per group commit")

// BenchmarkIngestDistinctGroups is the ingest row's load in process: batches
// of 64 Alertmanager events, each a distinct alert group, stored and
// dispatched in one group commit each: every event opens an incident, and
// under overlap_policy skip all but the first record a skip on it. Body
// hashes are random, as real ones (the dedupe index takes them in no order).
//
//	go test ./store -run '^$' -bench IngestDistinctGroups -benchtime 20000x
//
// Instructions per event, the same however loaded the machine is: the
// difference of two callgrind runs (-benchtime 1000x and 5000x, with
// -bench.checkpoint-every 2 and GODEBUG=asyncpreemptoff=1), over 4000.
func BenchmarkIngestDistinctGroups(b *testing.B) {
	if *benchCheckpointEvery > 0 {
		defer func(d time.Duration) { ckptDelay = d }(ckptDelay)
		ckptDelay = time.Hour
	}
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
	batch := *benchBatch
	items := make([]IngestItem, 0, batch)
	b.ResetTimer()
	cpu0, w0 := cpuTime(), bytesWritten()
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
		if n := *benchCheckpointEvery; n > 0 && (i/batch)%n == n-1 {
			db.ckpt.checkpoint("PASSIVE")
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/event")
	b.ReportMetric(float64(bytesWritten()-w0)/float64(b.N), "written-B/event")
}

// bytesWritten is what the process has written so far (/proc/self/io's
// wchar: the WAL's frames and the checkpoints' pages), 0 where there is
// no /proc. Unlike the CPU time it does not vary with the machine's load:
// a schema change that dirties fewer pages per event shows here first.
func bytesWritten() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}
