package store

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// BenchmarkIngestGroupCommit measures the ingest writer's share of a
// durable webhook delivery: batches of 32 Alertmanager-sized events of one
// correlated storm stored AND dispatched (joined to the incident, timeline
// entry) in one synchronous=FULL transaction each. cpu-us/event is the
// process CPU per event; ns/op includes the fsync wait.
//
//	go test ./store -run '^$' -bench IngestGroupCommit -benchtime 20000x
func BenchmarkIngestGroupCommit(b *testing.B) {
	db, _ := openTemp(b)
	ctx := context.Background()
	hook := benchWebhook(b, db)
	if gated {
		_ = db.SetQuotaGate(meterGate)
	}
	body := make([]byte, 560)
	for i := range body {
		body[i] = 'x'
	}
	alerts := `[{"source":"alertmanager","title":"HighLatency","severity":"critical","status":"firing","fingerprint":"fp","group_key":"storm","labels":{"alertname":"HighLatency","service":"api","severity":"critical"},"links":["http://prom/graph"],"starts_at":"2024-05-01T10:00:00Z","summary":"p99 above 2s"}]`
	const batch = 32
	items := make([]IngestItem, 0, batch)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i += batch {
		items = items[:0]
		for j := i; j < min(i+batch, b.N); j++ {
			e := &WebhookEvent{OrgID: hook.OrgID, ProjectID: hook.ProjectID, TaskID: hook.TaskID, Provider: "alertmanager",
				Type: "alertmanager.firing", BodyHash: fmt.Sprintf("%064d", j), Verification: "bearer", Body: body,
				BodySize: len(body), Headers: `{"content-type":"application/json","user-agent":"Alertmanager/0.27.0"}`, Alerts: alerts}
			plan := &DispatchPlan{Targets: []DispatchTarget{{TargetTaskID: hook.TaskID}},
				Correlation: &Correlation{Keys: []string{"group:storm"}, Window: time.Hour, Title: "HighLatency",
					Severity: "critical", AlertCount: 1, Firing: true, Alerts: alerts},
				RenderInput: func() string { return "alert" }}
			items = append(items, IngestItem{Event: e, Plan: plan, HookUpdatedAt: hook.UpdatedAt})
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

// benchWebhook creates a user, org, project, task and its webhook.
func benchWebhook(b testing.TB, db *DB) *Webhook {
	ctx := context.Background()
	w := &Webhook{Provider: "alertmanager", Scheme: "bearer", Enabled: true, RoutingMode: "first_match", RateLimit: 600,
		RetentionDays: 30, RedactGlobs: []string{}, Correlate: true, CorrelationWindow: 3600, ApprovalTTL: 86400, BadgeToken: "badge"}
	err := db.Write(ctx, func(tx *Tx) error {
		u := &User{Email: "bench@example.com", Name: "b"}
		if err := createUserTx(ctx, tx, u); err != nil {
			return err
		}
		o := &Organization{Name: "bench"}
		if err := createOrgTx(ctx, tx, o, u.ID); err != nil {
			return err
		}
		p := &Project{OrgID: o.ID, Name: "prod"}
		if err := createProjectTx(ctx, tx, p); err != nil {
			return err
		}
		t := &Task{OrgID: o.ID, ProjectID: p.ID, Name: "alert", Prompt: "look", Enabled: true, MissedFirePolicy: "skip",
			OverlapPolicy: "queue", Timezone: "UTC", AgentType: "default"}
		w.OrgID, w.ProjectID = o.ID, p.ID
		return createTaskTx(ctx, tx, t, func(*Task, time.Time) (*time.Time, error) { w.TaskID = t.ID; return nil, nil })
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.SaveWebhook(ctx, w, nil); err != nil {
		b.Fatal(err)
	}
	h, err := db.FindWebhook(ctx, w.OrgID, w.ProjectID, w.TaskID)
	if err != nil {
		b.Fatal(err)
	}
	return h
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkIngestGroupCommitMetered is BenchmarkIngestGroupCommit with a
// quota gate metering every delivery against a monthly limit never reached
// (what --billing showback adds to the group commit; compare the two).
func BenchmarkIngestGroupCommitMetered(b *testing.B) {
	b.Run("off", BenchmarkIngestGroupCommit)
	b.Run("metered", func(b *testing.B) {
		gated = true
		defer func() { gated = false }()
		BenchmarkIngestGroupCommit(b)
	})
}

// gated makes BenchmarkIngestGroupCommit install the metering gate.
var gated bool

func meterGate(ctx context.Context, tx *Tx, kind QuotaKind, orgID string, n int64) error {
	over, _, err := BumpMonthlyWithin(ctx, tx, orgID, string(kind), n, 1e8, true, func() (int64, error) { return 0, nil })
	if err == nil && over {
		return &QuotaError{Quota: kind}
	}
	return err
}
