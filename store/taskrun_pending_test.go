package store

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// FindPendingRuns hands the dispatcher the oldest pending run of each task,
// oldest first (a task runs one at a time), however long a task's queue:
// the next run of a task appears once the one before it left pending, and a
// pending session that is no task run is never one.
func TestFindPendingRunsOldestOfEachTask(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	clock := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { clock = clock.Add(time.Second); return clock }
	var tasks []*Task
	runs := map[string][]string{} // task id -> its runs, oldest first
	err := db.Write(ctx, func(tx *Tx) error {
		org, projects, err := seedOrgTx(ctx, tx, "pending", "prod")
		if err != nil {
			return err
		}
		for i := 0; i < 3; i++ {
			tk := &Task{OrgID: org, ProjectID: projects[0], Name: fmt.Sprintf("t%d", i), Prompt: "look", Enabled: true,
				MissedFirePolicy: "skip", OverlapPolicy: "queue", Timezone: "UTC", AgentType: "default"}
			if err := createTaskTx(ctx, tx, tk, func(*Task, time.Time) (*time.Time, error) { return nil, nil }); err != nil {
				return err
			}
			tasks = append(tasks, tk)
		}
		// A pending session of the task that is not a run.
		return CreateAgentSessionTx(ctx, tx, &AgentSession{OrgID: org, ProjectID: projects[0], TaskID: tasks[2].ID})
	})
	if err != nil {
		t.Fatal(err)
	}
	// Queues of 5, 1 and 3 runs, recorded interleaved (one transaction each,
	// so each has its own time): task 1's only run is the oldest head.
	order := []int{1, 0, 2, 0, 0, 2, 0, 2, 0}
	for i, k := range order {
		err := db.Write(ctx, func(tx *Tx) error {
			s, err := recordRunTx(ctx, tx, tasks[k], fmt.Sprintf("key-%d", i), TriggerManual, SessionPending, "", "", nil, 0)
			if err == nil {
				runs[tasks[k].ID] = append(runs[tasks[k].ID], s.ID)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	heads := func(limit int) []string {
		t.Helper()
		// Both ways of reading the heads: one by one (a few) and by chunks.
		var paths [2][]string
		for i, singles := range []int{pendingRunSingles, 0} {
			defer func(was int) { pendingRunSingles = was }(pendingRunSingles)
			pendingRunSingles = singles
			got, err := db.FindPendingRuns(ctx, limit)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range got {
				if p.Task.ID != p.Session.TaskID || p.Session.Status != SessionPending {
					t.Fatalf("run %+v", p)
				}
				paths[i] = append(paths[i], p.Session.ID)
			}
		}
		if fmt.Sprint(paths[0]) != fmt.Sprint(paths[1]) {
			t.Fatalf("heads one by one %v, by chunks %v", paths[0], paths[1])
		}
		return paths[0]
	}
	want := []string{runs[tasks[1].ID][0], runs[tasks[0].ID][0], runs[tasks[2].ID][0]}
	if got := heads(2000); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("heads %v, want %v", got, want)
	}
	if got := heads(2); fmt.Sprint(got) != fmt.Sprint(want[:2]) {
		t.Fatalf("limit 2: %v, want %v", got, want[:2])
	}
	// Task 0's first run and task 1's start: task 0's second (recorded after
	// task 2's first) is its head.
	for _, id := range []string{runs[tasks[0].ID][0], runs[tasks[1].ID][0]} {
		if ok, err := db.StartTaskRun(ctx, id, ""); err != nil || !ok {
			t.Fatal(ok, err)
		}
	}
	want = []string{runs[tasks[2].ID][0], runs[tasks[0].ID][1]}
	if got := heads(2000); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after starts: %v, want %v", got, want)
	}
	// More heads than one query reads (pendingRunChunk).
	err = db.Write(ctx, func(tx *Tx) error {
		for i := 0; i < pendingRunChunk+5; i++ {
			tk := &Task{OrgID: tasks[0].OrgID, ProjectID: tasks[0].ProjectID, Name: fmt.Sprintf("many%d", i), Prompt: "look",
				Enabled: true, MissedFirePolicy: "skip", OverlapPolicy: "queue", Timezone: "UTC", AgentType: "default"}
			if err := createTaskTx(ctx, tx, tk, func(*Task, time.Time) (*time.Time, error) { return nil, nil }); err != nil {
				return err
			}
			if _, err := recordRunTx(ctx, tx, tk, "many-"+tk.ID, TriggerManual, SessionPending, "", "", nil, 0); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := heads(2000); len(got) != 2+pendingRunChunk+5 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("%d heads, first %v", len(got), got[:2])
	}
}
