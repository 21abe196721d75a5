package store

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"
)

// The trigger-kept counts of counted quotas agree with the rows whichever
// path changes them: inserts, enabling and disabling, deletes, and the
// cascade of a project's deletion.
func TestBillingCountsFollowRows(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	var org, p1, p2 string
	never := func(*Task, time.Time) (*time.Time, error) { return nil, nil }
	task := func(project string, enabled bool) *Task {
		return &Task{OrgID: org, ProjectID: project, Name: NewID(), Prompt: "x", Enabled: enabled, MissedFirePolicy: "skip",
			OverlapPolicy: "queue", Timezone: "UTC", AgentType: "default"}
	}
	err := db.Write(ctx, func(tx *Tx) error {
		o, ps, err := seedOrgTx(ctx, tx, "count", "a", "b")
		if err != nil {
			return err
		}
		org, p1, p2 = o, ps[0], ps[1]
		for _, tk := range []*Task{task(p1, true), task(p1, false), task(p2, true), task(p2, true)} {
			if err := createTaskTx(ctx, tx, tk, never); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	check := func(kind QuotaKind, want int64) {
		t.Helper()
		got, _, err := QuotaUse(ctx, db.r, kind, org, time.Now())
		if err != nil || got != want {
			t.Fatalf("%s: got %d (%v), want %d", kind, got, err, want)
		}
	}
	check(QuotaProjects, 2)
	check(QuotaEnabledTasks, 3)
	off := task(p1, false)
	if err := db.CreateTask(ctx, off, never); err != nil {
		t.Fatal(err)
	}
	on := true
	if _, err := db.UpdateTask(ctx, org, p1, off.ID, TaskPatch{Enabled: &on}, never); err != nil {
		t.Fatal(err)
	}
	check(QuotaEnabledTasks, 4)
	if err := db.DeleteProject(ctx, org, p2); err != nil {
		t.Fatal(err)
	}
	check(QuotaProjects, 1)
	check(QuotaEnabledTasks, 2) // p2's two enabled tasks went with it
}

// BenchmarkCreateProjectQuotaGate: a project create without a gate (billing
// off) and with the gate's reads (account and count) in its transaction.
func BenchmarkCreateProjectQuotaGate(b *testing.B) {
	for _, mode := range []string{"off", "noop", "gated"} {
		name, gated := mode, mode != "off"
		b.Run(name, func(b *testing.B) {
			db, _ := openTemp(b)
			ctx := context.Background()
			var org string
			if err := db.Write(ctx, func(tx *Tx) error {
				var err error
				org, _, err = seedOrgTx(ctx, tx, "gate")
				return err
			}); err != nil {
				b.Fatal(err)
			}
			if gated {
				if err := db.SetQuotaGate(func(ctx context.Context, tx *Tx, kind QuotaKind, orgID string, n int64) error {
					if mode == "noop" {
						return nil
					}
					if _, err := BillingAccountTx(ctx, tx, orgID); err != nil {
						return err
					}
					_, err := CountedOver(ctx, tx, kind, orgID, n, 1e6)
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				if err := db.CreateProject(ctx, &Project{OrgID: org, Name: "p" + NewID()}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-c0).Microseconds())/float64(b.N), "cpu_us/op")
		})
	}
}

// BenchmarkQuotaGateReads is the gate's own work (cached account, one
// counted quota) in a write transaction, against the same transaction
// empty: the difference is what the gate adds to a create.
func BenchmarkQuotaGateReads(b *testing.B) {
	for _, mode := range []string{"empty", "gate"} {
		b.Run(mode, func(b *testing.B) {
			db, _ := openTemp(b)
			ctx := context.Background()
			var org string
			if err := db.Write(ctx, func(tx *Tx) error {
				var err error
				org, _, err = seedOrgTx(ctx, tx, "gate")
				return err
			}); err != nil {
				b.Fatal(err)
			}
			if err := db.SetQuotaGate(func(context.Context, *Tx, QuotaKind, string, int64) error { return nil }); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				if err := db.Write(ctx, func(tx *Tx) error {
					if mode == "empty" {
						return nil
					}
					if _, err := BillingAccountTx(ctx, tx, org); err != nil {
						return err
					}
					if over, err := CountedOver(ctx, tx, QuotaEnabledTasks, org, 1, 1e6); err != nil || over {
						return fmt.Errorf("over %v: %v", over, err)
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N), "cpu_ns/op")
		})
	}
}

// The monthly token and cost caps count model calls made outside sessions
// (postmortem drafts) beside the sessions; they are not runs.
func TestFindAgentUseCountsCallsOutsideSessions(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	var org string
	var projects []string
	if err := db.Write(ctx, func(tx *Tx) error {
		var err error
		org, projects, err = seedOrgTx(ctx, tx, "use", "prod")
		if err != nil {
			return err
		}
		return CreateAgentSessionTx(ctx, tx, &AgentSession{OrgID: org, ProjectID: projects[0], Source: "webchat",
			Status: "completed", TokensIn: 10, TokensOut: 5, Cost: 0.5})
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.RecordLLMCall(ctx, &LLMCall{OrgID: org, ProjectID: projects[0], Purpose: "postmortem", Model: "m",
		TokensIn: 100, TokensOut: 50, Cost: 0.25}); err != nil {
		t.Fatal(err)
	}
	u, err := db.FindAgentUse(ctx, org, time.Now().Add(-time.Hour))
	if err != nil || u.Runs != 1 || u.Tokens != 165 || math.Abs(u.Cost-0.75) > 1e-9 {
		t.Fatalf("got %+v, %v; want 1 run, 165 tokens, $0.75", u, err)
	}
}
