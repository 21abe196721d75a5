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

var benchPGBatch = flag.Int("bench.pg-batch", 20, "events per group commit in BenchmarkIngestPostgresBackend")

// BenchmarkIngestPostgresBackend is the PostgreSQL ingest bench's group
// commit without HTTP or runs: batches of -bench.pg-batch deliveries (20 is
// what the bench's 64 connections make), every alert its own group, the
// task on overlap_policy skip. Besides this process's CPU per event it
// reports the CPU of the test database's backends per event (from /proc:
// the cluster must run on this machine), the PostgreSQL share the bench
// measures, without the run churn and the rest of the cluster around it.
func BenchmarkIngestPostgresBackend(b *testing.B) {
	db, _ := openTempPG(b)
	ctx := context.Background()
	hook := benchWebhook(b, db)
	if err := db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE tasks SET overlap_policy = 'skip' WHERE id = ?`, hook.TaskID)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	if q := os.Getenv("BENCH_PG_SETUP"); q != "" { // experiments only
		if _, err := db.w.ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	backends := func() []int {
		rows, err := db.r.QueryContext(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
		if err != nil {
			b.Fatal(err)
		}
		defer rows.Close()
		var pids []int
		for rows.Next() {
			var p int
			if err := rows.Scan(&p); err != nil {
				b.Fatal(err)
			}
			pids = append(pids, p)
		}
		return pids
	}
	body := []byte(strings.Repeat("x", 494))
	batch := *benchPGBatch
	items := make([]IngestItem, 0, batch)
	run := fmt.Sprintf("r%d", time.Now().UnixNano())
	ingest := func(from, to int) {
		items = items[:0]
		for j := from; j < to; j++ {
			id := run + "-" + strconv.Itoa(j)
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
		if _, err := db.InsertWebhookEvents(ctx, items); err != nil {
			b.Fatal(err)
		}
	}
	// A first 2,000 events, then the analyzer's pass: the tables have
	// statistics and the writer's statements their generic plans, as after
	// a bench's first seconds.
	for i := 0; i < 2000; i += batch {
		ingest(i, i+batch)
	}
	// The analyzer's first pass (every pgAnalyzeEvery) comes later than
	// these 2,000 events: until it runs, the writer's generic plans are
	// costed on empty tables (the key prefetch then read every open
	// incident of the project: milliseconds per batch, growing), a transient
	// the bench's servers leave behind within their first seconds.
	db.analyzeGrown(ctx)
	pids := backends()
	b.ResetTimer()
	cpu0, pg0 := cpuTime(), procTicks(pids)
	for i := 0; i < b.N; i += batch {
		ingest(2000+i, 2000+min(i+batch, b.N))
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/event")
	b.ReportMetric(float64(procTicks(pids)-pg0)*1e4/float64(b.N), "pg-cpu-us/event")
}

// procTicks is the user and system CPU of the processes, in clock ticks of
// 10 ms (Linux's USER_HZ).
func procTicks(pids []int) int64 {
	var t int64
	for _, p := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		u, _ := strconv.ParseInt(f[11], 10, 64)
		k, _ := strconv.ParseInt(f[12], 10, 64)
		t += u + k
	}
	return t
}
