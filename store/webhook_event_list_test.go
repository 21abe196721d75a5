package store

import (
	"context"
	"fmt"
	"testing"
)

// The events waiting for dispatch are listed and counted from the partial
// index of pending events, for the task asked and no other: mixed with
// dispatched events of the same task and pending events of another.
func TestListReceivedWebhookEvents(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	hook := benchWebhook(t, db)
	other := benchWebhook2(t, db, hook)
	n := 0
	item := func(taskID string, dispatch bool) IngestItem {
		n++
		e := &WebhookEvent{OrgID: hook.OrgID, ProjectID: hook.ProjectID, TaskID: taskID, Provider: "alertmanager",
			Type: "alertmanager.firing", BodyHash: fmt.Sprintf("%064d", n), Verification: "bearer", Body: []byte("{}"), BodySize: 2}
		it := IngestItem{Event: e, HookUpdatedAt: hook.UpdatedAt}
		if dispatch {
			it.Plan = &DispatchPlan{NoMatch: true}
		}
		return it
	}
	var items []IngestItem
	for i := 0; i < 5; i++ {
		items = append(items, item(hook.TaskID, true), item(hook.TaskID, false), item(other, false))
	}
	res, err := db.InsertWebhookEvents(ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	var pending []string
	for i, r := range res {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		if items[i].Event.TaskID == hook.TaskID && r.Dispatched == nil {
			pending = append(pending, r.ID)
		}
	}
	got, total, err := db.FindWebhookEvents(ctx, WebhookEventFilter{OrgID: hook.OrgID, ProjectID: hook.ProjectID,
		TaskID: hook.TaskID, Status: EventReceived, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if total != len(pending) || len(got) != 3 {
		t.Fatalf("received events: %d listed of %d, want 3 of %d", len(got), total, len(pending))
	}
	for i, e := range got {
		if e.Status != EventReceived || e.TaskID != hook.TaskID || e.ID != pending[len(pending)-1-i] {
			t.Fatalf("event %d: %s %s %s, want %s of task %s newest first", i, e.ID, e.Status, e.TaskID, pending[len(pending)-1-i], hook.TaskID)
		}
	}
	if _, total, err := db.FindWebhookEvents(ctx, WebhookEventFilter{OrgID: hook.OrgID, ProjectID: "another",
		TaskID: hook.TaskID, Status: EventReceived, Limit: 3}); err != nil || total != 0 {
		t.Fatalf("another project's view: %d (%v)", total, err)
	}
	if _, total, err := db.FindWebhookEvents(ctx, WebhookEventFilter{OrgID: hook.OrgID, ProjectID: hook.ProjectID,
		TaskID: hook.TaskID, Status: EventNoMatch, Limit: 3}); err != nil || total != 5 {
		t.Fatalf("no_match events: %d (%v), want 5", total, err)
	}
}
