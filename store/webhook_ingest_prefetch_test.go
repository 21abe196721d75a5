package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// What a group commit reads in advance (prefetchIngest) answers as the
// per-event reads did: a run started by an earlier commit makes the next
// commit's events skip under overlap_policy skip, naming that run; a
// disabled webhook refuses its deliveries; a target task of another
// project is one that no longer exists.
func TestIngestPrefetchAcrossCommits(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	hook := benchWebhook(t, db)
	other := benchWebhook2(t, db, hook)
	if err := db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE tasks SET overlap_policy = 'skip' WHERE id = ?`, hook.TaskID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	n := 0
	item := func(taskID, target string) IngestItem {
		n++
		e := &WebhookEvent{OrgID: hook.OrgID, ProjectID: hook.ProjectID, TaskID: taskID, Provider: "alertmanager",
			Type: "alertmanager.firing", BodyHash: fmt.Sprintf("%064d", n), Verification: "bearer", Body: []byte("{}"), BodySize: 2}
		plan := &DispatchPlan{Targets: []DispatchTarget{{TargetTaskID: target}}}
		return IngestItem{Event: e, Plan: plan, HookUpdatedAt: hook.UpdatedAt}
	}
	ingest := func(items ...IngestItem) []IngestResult {
		t.Helper()
		res, err := db.InsertWebhookEvents(ctx, items)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := ingest(item(hook.TaskID, hook.TaskID))[0]
	if first.Dispatched == nil || first.Dispatched.Items[0].Kind != "run" || first.Dispatched.Items[0].ID == "" {
		t.Fatalf("first event: %+v", first.Dispatched)
	}
	run := first.Dispatched.Items[0].ID
	next := ingest(item(hook.TaskID, hook.TaskID))[0]
	if it := next.Dispatched.Items[0]; next.Dispatched.Status != EventSkipped || !strings.Contains(it.Reason, run) {
		t.Fatalf("the next commit's event: %s %+v, want skipped naming %s", next.Dispatched.Status, it, run)
	}
	// A task of another project: benchWebhook's org and project, so make one elsewhere.
	var foreign string
	if err := db.Write(ctx, func(tx *Tx) error {
		p := &Project{OrgID: hook.OrgID, Name: "elsewhere"}
		if err := createProjectTx(ctx, tx, p); err != nil {
			return err
		}
		tk := &Task{OrgID: hook.OrgID, ProjectID: p.ID, Name: "foreign", Prompt: "x", Enabled: true, MissedFirePolicy: "skip",
			OverlapPolicy: "queue", Timezone: "UTC", AgentType: "default"}
		return createTaskTx(ctx, tx, tk, func(*Task, time.Time) (*time.Time, error) { foreign = tk.ID; return nil, nil })
	}); err != nil {
		t.Fatal(err)
	}
	// The other webhook disabled: its delivery is refused, the rest of the batch is not.
	if err := db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE webhooks SET enabled = 0 WHERE task_id = ?`, other)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	res := ingest(item(other, other), item(hook.TaskID, foreign))
	if !IsNotFound(res[0].Err) {
		t.Fatalf("a disabled webhook's delivery: %+v", res[0])
	}
	if res[1].Err != nil || res[1].Dispatched == nil || res[1].Dispatched.Items[0].Reason != "target task no longer exists" {
		t.Fatalf("a target of another project: %+v %+v", res[1], res[1].Dispatched)
	}
}
