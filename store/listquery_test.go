package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// listFixture makes two projects of one org (a, b) with n tasks in a and one
// in b, named "task 0".."task n-1"; every third is disabled.
func listFixture(t *testing.T, n int) (db *DB, orgID, projA, projB string) {
	t.Helper()
	db, _ = openTemp(t)
	ctx := context.Background()
	never := func(*Task, time.Time) (*time.Time, error) { return nil, nil }
	err := db.Write(ctx, func(tx *Tx) error {
		o, ps, err := seedOrgTx(ctx, tx, "list", "a", "b")
		if err != nil {
			return err
		}
		orgID, projA, projB = o, ps[0], ps[1]
		for i := 0; i < n; i++ {
			task := &Task{OrgID: o, ProjectID: projA, Name: fmt.Sprintf("task %d", i), Prompt: "secret prompt", Enabled: i%3 != 0,
				MissedFirePolicy: "skip", OverlapPolicy: "queue", Timezone: "UTC", AgentType: "general"}
			if err := createTaskTx(ctx, tx, task, never); err != nil {
				return err
			}
		}
		other := &Task{OrgID: o, ProjectID: projB, Name: "task in b", Prompt: "p", Enabled: true,
			MissedFirePolicy: "skip", OverlapPolicy: "queue", Timezone: "UTC", AgentType: "general"}
		return createTaskTx(ctx, tx, other, never)
	})
	if err != nil {
		t.Fatal(err)
	}
	return db, orgID, projA, projB
}

// One query returns a page and the total of all matching rows, scoped to
// the project; a page past the end still reports the total.
func TestListPageTotalsAndScope(t *testing.T) {
	db, org, a, b := listFixture(t, 7)
	ctx := context.Background()
	f := func(mod func(*TaskFilter)) ([]Task, int) {
		t.Helper()
		tf := TaskFilter{OrgID: org, ProjectID: a, Limit: 3}
		if mod != nil {
			mod(&tf)
		}
		ts, total, err := db.FindTasks(ctx, tf)
		if err != nil {
			t.Fatal(err)
		}
		return ts, total
	}
	ts, total := f(nil)
	if len(ts) != 3 || total != 7 {
		t.Fatalf("first page: %d rows, total %d; want 3 of 7", len(ts), total)
	}
	if ts[0].Prompt != "" {
		t.Errorf("lists leave the prompt out, got %q", ts[0].Prompt)
	}
	if ts, total = f(func(tf *TaskFilter) { tf.Offset = 6 }); len(ts) != 1 || total != 7 {
		t.Fatalf("last page: %d rows, total %d", len(ts), total)
	}
	if ts, total = f(func(tf *TaskFilter) { tf.Offset = 50 }); len(ts) != 0 || total != 7 {
		t.Fatalf("past the end: %d rows, total %d; want 0 of 7", len(ts), total)
	}
	off := false
	if ts, total = f(func(tf *TaskFilter) { tf.Enabled = &off; tf.Limit = 50 }); len(ts) != 3 || total != 3 {
		t.Fatalf("disabled: %d rows, total %d; want 3", len(ts), total)
	}
	if _, total = f(func(tf *TaskFilter) { tf.Search = "TASK 1" }); total != 1 {
		t.Fatalf("search: total %d", total)
	}
	// LIKE wildcards in the search are literal.
	if _, total = f(func(tf *TaskFilter) { tf.Search = "task %" }); total != 0 {
		t.Fatalf("escaped search matched %d", total)
	}
	if ts, total = f(func(tf *TaskFilter) { tf.ProjectID = b }); total != 1 || ts[0].Name != "task in b" {
		t.Fatalf("project b: %v %d", ts, total)
	}
	if ts, total = f(func(tf *TaskFilter) { tf.OrgID = "another org" }); total != 0 || len(ts) != 0 {
		t.Fatalf("another org sees %d", total)
	}
}

// The list statements are prepared once per filter combination, and no
// more than maxListStmts of them are kept.
func TestListStatementsCachedAndBounded(t *testing.T) {
	db, org, a, _ := listFixture(t, 2)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, _, err := db.FindTasks(ctx, TaskFilter{OrgID: org, ProjectID: a, Search: fmt.Sprint("x", i), Limit: 5}); err != nil {
			t.Fatal(err)
		}
	}
	if n := db.nstmts.Load(); n != 1 {
		t.Fatalf("three searches prepared %d statements, want 1", n)
	}
	db.nstmts.Store(maxListStmts)
	if _, total, err := db.FindTasks(ctx, TaskFilter{OrgID: org, ProjectID: a, AgentType: "general", Limit: 5}); err != nil || total != 2 {
		t.Fatalf("past the bound: total %d, %v", total, err)
	}
	cached := 0
	db.stmts.Range(func(k, _ any) bool {
		if strings.Contains(k.(string), "agent_type = ?") {
			cached++
		}
		return true
	})
	if cached != 0 {
		t.Fatal("a statement was cached past the bound")
	}
}
