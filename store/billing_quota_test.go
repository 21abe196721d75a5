package store

import (
	"context"
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
		u := &User{Email: "count@example.com", Name: "c"}
		if err := createUserTx(ctx, tx, u); err != nil {
			return err
		}
		o := &Organization{Name: "count"}
		if err := createOrgTx(ctx, tx, o, u.ID); err != nil {
			return err
		}
		org = o.ID
		a, b := &Project{OrgID: org, Name: "a"}, &Project{OrgID: org, Name: "b"}
		if err := createProjectTx(ctx, tx, a); err != nil {
			return err
		}
		if err := createProjectTx(ctx, tx, b); err != nil {
			return err
		}
		p1, p2 = a.ID, b.ID
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
