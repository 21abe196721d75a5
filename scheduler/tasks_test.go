package scheduler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/scheduler"
	"github.com/opsagent/opsagent/store"
)

var t0 = time.Date(2026, 1, 5, 10, 1, 0, 0, time.UTC) // a Monday

func TestDueFireRunsOnce(t *testing.T) {
	fx := newFixture(t, t0)
	task := fx.task("*/5 * * * *")
	if want := t0.Add(4 * time.Minute); !task.NextRunAt.Equal(want) {
		t.Fatalf("next_run_at %v, want %v", task.NextRunAt, want)
	}
	rec := newRecorder(false)
	e := fx.engine(rec)

	fx.clk.Set(t0.Add(2 * time.Minute))
	if r := mustTick(t, e); r.Recorded != 0 {
		t.Fatalf("fired early: %+v", r)
	}
	fx.clk.Set(t0.Add(4 * time.Minute))
	if r := mustTick(t, e); r.Recorded != 1 || r.Dispatched != 1 {
		t.Fatalf("due tick: %+v", r)
	}
	e.Wait()
	fx.clk.Set(t0.Add(4*time.Minute + 30*time.Second))
	if r := mustTick(t, e); r.Recorded != 0 {
		t.Fatalf("second tick in the same minute recorded %d", r.Recorded)
	}
	e.Wait()
	if rec.total() != 1 {
		t.Fatalf("executed %d times", rec.total())
	}
	rs := fx.runs(task.ID)
	if len(rs) != 1 || rs[0].Status != store.SessionCompleted || rs[0].Source != "task" || rs[0].TriggerSource != "scheduled" {
		t.Fatalf("runs: %+v", rs)
	}
	got := fx.reload(task)
	if got.LastStatus != store.SessionCompleted || got.LastSessionID != rs[0].ID || !got.NextRunAt.Equal(t0.Add(9*time.Minute)) {
		t.Fatalf("task after run: %+v", got)
	}
	run := rec.runs[0]
	if !strings.Contains(run.Prompt, "check things") || !strings.Contains(run.Prompt, "site reliability engineer") ||
		run.ScheduledFor == nil || !run.ScheduledFor.Equal(t0.Add(4*time.Minute)) || run.Budget.MaxSteps != 10 {
		t.Fatalf("run handed to the executor: %+v", run)
	}
}

func TestRestartBetweenRecordAndDispatch(t *testing.T) {
	fx := newFixture(t, t0)
	task := fx.task("*/5 * * * *")
	fx.clk.Set(t0.Add(4 * time.Minute))
	first := newRecorder(false)
	e1 := fx.engine(first)
	if n, err := e1.Record(context.Background()); err != nil || n != 1 {
		t.Fatalf("record: %d %v", n, err)
	}
	e1.Stop() // the process dies after the commit, before any dispatch
	if first.total() != 0 {
		t.Fatal("dispatched before the crash")
	}
	fx.reopen()
	fx.clk.Set(t0.Add(4*time.Minute + 20*time.Second))
	second := newRecorder(false)
	e2 := fx.engine(second)
	if err := e2.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	e2.Wait()
	if r := mustTick(t, e2); r.Recorded != 0 {
		t.Fatalf("the fire was recorded twice: %+v", r)
	}
	e2.Wait()
	if second.total() != 1 {
		t.Fatalf("after restart executed %d times, want 1", second.total())
	}
	second.assertOnce(t)
	if rs := fx.runs(task.ID); len(rs) != 1 || rs[0].Status != store.SessionCompleted {
		t.Fatalf("runs: %s", statuses(rs))
	}
}

func TestRunKeyIsUnique(t *testing.T) {
	fx := newFixture(t, t0)
	task := fx.task("*/5 * * * *")
	fx.clk.Set(t0.Add(4 * time.Minute))
	due, err := fx.db.FindDueTasks(context.Background(), fx.clk.Now(), 10)
	if err != nil || len(due) != 1 {
		t.Fatalf("due: %v %v", due, err)
	}
	fire := scheduler.PlanFire(&due[0], fx.clk.Now(), time.Minute)
	// The same planned fire written twice (two racing ticks): the second is stale.
	res1, err := fx.db.RecordFires(context.Background(), []store.Fire{fire})
	if err != nil {
		t.Fatal(err)
	}
	res2, err := fx.db.RecordFires(context.Background(), []store.Fire{fire})
	if err != nil {
		t.Fatal(err)
	}
	if res1[0].SessionID == "" || !res2[0].Stale || res2[0].SessionID != "" {
		t.Fatalf("first %+v second %+v", res1, res2)
	}
	if rs := fx.runs(task.ID); len(rs) != 1 {
		t.Fatalf("%d runs recorded", len(rs))
	}
}

func TestRunningAtCrashIsFailedNotRerun(t *testing.T) {
	fx := newFixture(t, t0)
	task := fx.task("*/5 * * * *")
	fx.clk.Set(t0.Add(4 * time.Minute))
	gated := newRecorder(true)
	e1 := fx.engine(gated)
	mustTick(t, e1)
	gated.waitStarted(t, 1)
	// Simulate a kill -9: the session stays "running" in the file. Copy the
	// file state by reopening a second handle without letting e1 finish.
	rs := fx.runs(task.ID)
	if len(rs) != 1 || rs[0].Status != store.SessionRunning {
		t.Fatalf("before crash: %s", statuses(rs))
	}
	fresh := newRecorder(false)
	e2 := scheduler.NewTasks(fx.db, scheduler.TaskOptions{Executor: fresh, Now: fx.clk.Now})
	if err := e2.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	e2.Wait()
	if fresh.total() != 0 {
		t.Fatal("an interrupted run was executed again")
	}
	rs = fx.runs(task.ID)
	if rs[0].Status != store.SessionFailed || !strings.Contains(rs[0].Reason, "interrupted") {
		t.Fatalf("after recover: %+v", rs[0])
	}
	close(gated.gate)
	e1.Wait() // its late outcome cannot overwrite the terminal status
	if rs = fx.runs(task.ID); rs[0].Status != store.SessionFailed {
		t.Fatalf("terminal status overwritten: %s", rs[0].Status)
	}
}

func TestOverlapSkip(t *testing.T) {
	fx := newFixture(t, t0)
	task := fx.task("* * * * *")
	rec := newRecorder(true)
	e := fx.engine(rec)
	fx.clk.Set(t0.Add(time.Minute))
	mustTick(t, e)
	rec.waitStarted(t, 1)
	fx.clk.Set(t0.Add(2 * time.Minute))
	if r := mustTick(t, e); r.Recorded != 1 || r.Dispatched != 0 {
		t.Fatalf("overlapping tick: %+v", r)
	}
	rs := fx.runs(task.ID)
	if len(rs) != 2 || rs[0].Status != store.SessionCancelled || !strings.Contains(rs[0].Reason, "overlap_policy skip") {
		t.Fatalf("runs: %s %q", statuses(rs), rs[0].Reason)
	}
	close(rec.gate)
	e.Wait()
	if rec.total() != 1 {
		t.Fatalf("executed %d", rec.total())
	}
	if rs = fx.runs(task.ID); statuses(rs) != "completed cancelled " {
		t.Fatalf("final: %s", statuses(rs))
	}
}

func TestOverlapQueue(t *testing.T) {
	fx := newFixture(t, t0)
	task := fx.task("* * * * *", func(t *store.Task) { t.OverlapPolicy = "queue" })
	rec := newRecorder(true)
	e := fx.engine(rec)
	fx.clk.Set(t0.Add(time.Minute))
	mustTick(t, e)
	rec.waitStarted(t, 1)
	fx.clk.Set(t0.Add(2 * time.Minute))
	if r := mustTick(t, e); r.Recorded != 1 || r.Dispatched != 0 {
		t.Fatalf("queued tick: %+v", r)
	}
	if rs := fx.runs(task.ID); statuses(rs) != "running pending " {
		t.Fatalf("while the first runs: %s", statuses(rs))
	}
	rec.gate <- struct{}{} // finish the first; the queued one starts by itself
	rec.waitStarted(t, 1)
	close(rec.gate)
	e.Wait()
	rs := fx.runs(task.ID)
	if statuses(rs) != "completed completed " || rec.order[0] != rs[1].ID || rec.order[1] != rs[0].ID {
		t.Fatalf("final: %s order %v", statuses(rs), rec.order)
	}
	rec.assertOnce(t)
}

func TestMissedFirePolicies(t *testing.T) {
	fx := newFixture(t, time.Date(2026, 1, 5, 10, 30, 0, 0, time.UTC))
	once := fx.task("0 * * * *", func(t *store.Task) { t.Name = "once"; t.MissedFirePolicy = "run_once" })
	skip := fx.task("0 * * * *", func(t *store.Task) { t.Name = "skip"; t.MissedFirePolicy = "skip" })
	rec := newRecorder(false)
	// The server was down from 10:30 to 14:30: fires of 11, 12, 13 and 14 were missed.
	fx.clk.Set(time.Date(2026, 1, 5, 14, 30, 0, 0, time.UTC))
	e := fx.engine(rec)
	if err := e.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := mustTick(t, e); r.Recorded != 1 {
		t.Fatalf("catch-up tick: %+v", r)
	}
	e.Wait()
	if rs := fx.runs(skip.ID); len(rs) != 0 {
		t.Fatalf("skip policy ran %d", len(rs))
	}
	if rs := fx.runs(once.ID); len(rs) != 1 || !strings.Contains(rs[0].Reason, "catch-up") {
		t.Fatalf("run_once: %+v", rs)
	}
	run := rec.runs[0]
	if run.MissedFires != 4 || !run.ScheduledFor.Equal(time.Date(2026, 1, 5, 14, 0, 0, 0, time.UTC)) ||
		!strings.Contains(run.Prompt, "4 earlier fire(s) were missed") {
		t.Fatalf("catch-up run: missed %d at %v", run.MissedFires, run.ScheduledFor)
	}
	for _, tk := range []*store.Task{once, skip} {
		if got := fx.reload(tk); !got.NextRunAt.Equal(time.Date(2026, 1, 5, 15, 0, 0, 0, time.UTC)) {
			t.Fatalf("%s next_run_at %v", tk.Name, got.NextRunAt)
		}
	}
	// Back to normal: the 15:00 fire is on time for both.
	fx.clk.Set(time.Date(2026, 1, 5, 15, 0, 20, 0, time.UTC))
	if r := mustTick(t, e); r.Recorded != 2 {
		t.Fatalf("on-time tick: %+v", r)
	}
	e.Wait()
	rec.assertOnce(t)
}

func TestPlanFireSkipKeepsOnTimeFire(t *testing.T) {
	prev := time.Date(2026, 1, 5, 11, 0, 0, 0, time.UTC)
	task := &store.Task{ID: "x", Schedule: "0 * * * *", Timezone: "UTC", Enabled: true, MissedFirePolicy: "skip", NextRunAt: &prev}
	f := scheduler.PlanFire(task, time.Date(2026, 1, 5, 14, 0, 30, 0, time.UTC), time.Minute)
	if !f.Run || f.Dropped != 3 || f.MissedFires != 0 || !f.ScheduledFor.Equal(time.Date(2026, 1, 5, 14, 0, 0, 0, time.UTC)) {
		t.Fatalf("plan: %+v", f)
	}
}

func TestTimezoneSchedule(t *testing.T) {
	// 09:00 in New York is 14:00 UTC in January.
	fx := newFixture(t, t0)
	task := fx.task("0 9 * * *", func(t *store.Task) { t.Timezone = "America/New_York" })
	if want := time.Date(2026, 1, 5, 14, 0, 0, 0, time.UTC); !task.NextRunAt.Equal(want) {
		t.Fatalf("next %v want %v", task.NextRunAt, want)
	}
}

func TestOrgConcurrencyLimit(t *testing.T) {
	fx := newFixture(t, t0)
	for i := 0; i < 5; i++ {
		fx.task("*/5 * * * *")
	}
	otherOrg, otherProject := fx.addOrg("other@example.com")
	other := &store.Task{OrgID: otherOrg, ProjectID: otherProject, Name: "other", Prompt: "p", AgentType: "general",
		Schedule: "*/5 * * * *", Timezone: "UTC", Enabled: true, MissedFirePolicy: "run_once", OverlapPolicy: "skip", TimeoutSeconds: 60, MaxSteps: 5}
	if err := fx.db.CreateTask(context.Background(), other, scheduler.NextRun); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(true)
	e := fx.engine(rec, func(o *scheduler.TaskOptions) { o.OrgConcurrency = 2 })
	fx.clk.Set(t0.Add(4 * time.Minute))
	r := mustTick(t, e)
	if r.Recorded != 6 || r.Dispatched != 3 { // 2 of the first org, 1 of the other
		t.Fatalf("tick: %+v", r)
	}
	rec.waitStarted(t, 3)
	close(rec.gate)
	e.Wait()
	if rec.total() != 6 {
		t.Fatalf("executed %d of 6", rec.total())
	}
	rec.assertOnce(t)
}

func TestDisableAndEditTakeEffectWithoutRestart(t *testing.T) {
	fx := newFixture(t, t0)
	task := fx.task("*/5 * * * *")
	rec := newRecorder(false)
	e := fx.engine(rec)
	off := false
	if _, err := fx.db.UpdateTask(context.Background(), fx.orgID, fx.projectID, task.ID, store.TaskPatch{Enabled: &off}, scheduler.NextRun); err != nil {
		t.Fatal(err)
	}
	fx.clk.Set(t0.Add(10 * time.Minute))
	if r := mustTick(t, e); r.Recorded != 0 {
		t.Fatalf("disabled task fired: %+v", r)
	}
	// Re-enabling with a new schedule starts from now: no replay of the past.
	on, hourly := true, "0 * * * *"
	got, err := fx.db.UpdateTask(context.Background(), fx.orgID, fx.projectID, task.ID, store.TaskPatch{Enabled: &on, Schedule: &hourly}, scheduler.NextRun)
	if err != nil {
		t.Fatal(err)
	}
	if !got.NextRunAt.Equal(time.Date(2026, 1, 5, 11, 0, 0, 0, time.UTC)) {
		t.Fatalf("next after edit %v", got.NextRunAt)
	}
	if r := mustTick(t, e); r.Recorded != 0 {
		t.Fatalf("re-enable replayed the past: %+v", r)
	}
	fx.clk.Set(time.Date(2026, 1, 5, 11, 0, 1, 0, time.UTC))
	if r := mustTick(t, e); r.Recorded != 1 {
		t.Fatalf("edited schedule did not fire: %+v", r)
	}
	e.Wait()
}

func TestUnconfiguredExecutorFailsFast(t *testing.T) {
	fx := newFixture(t, t0)
	task := fx.task("*/5 * * * *")
	e := fx.engine(nil)
	fx.clk.Set(t0.Add(4 * time.Minute))
	mustTick(t, e)
	e.Wait()
	rs := fx.runs(task.ID)
	if len(rs) != 1 || rs[0].Status != store.SessionFailed || !strings.Contains(rs[0].Reason, "OPSAGENT_LLM_PROVIDER") {
		t.Fatalf("run: %+v", rs)
	}
	if got := fx.reload(task); got.LastStatus != store.SessionFailed || !strings.Contains(got.LastError, "no LLM configured") {
		t.Fatalf("task: %q %q", got.LastStatus, got.LastError)
	}
}

func TestTimeoutAndPanic(t *testing.T) {
	fx := newFixture(t, t0)
	slow := fx.task("*/5 * * * *", func(t *store.Task) { t.Name = "slow"; t.TimeoutSeconds = 1 })
	boom := fx.task("*/5 * * * *", func(t *store.Task) { t.Name = "boom" })
	exec := scheduler.ExecutorFunc(func(ctx context.Context, run *scheduler.Run) (scheduler.Outcome, error) {
		if run.TaskName == "boom" {
			panic("bad agent")
		}
		<-ctx.Done()
		return scheduler.Outcome{}, ctx.Err()
	})
	e := fx.engine(exec)
	fx.clk.Set(t0.Add(4 * time.Minute))
	mustTick(t, e)
	e.Wait()
	if rs := fx.runs(slow.ID); rs[0].Status != store.SessionTimeout {
		t.Fatalf("slow: %+v", rs[0])
	}
	if rs := fx.runs(boom.ID); rs[0].Status != store.SessionFailed || !strings.Contains(rs[0].Reason, "crashed") {
		t.Fatalf("boom: %+v", rs[0])
	}
}

func TestValidateSchedule(t *testing.T) {
	for _, bad := range []string{"* * * *", "61 * * * *", "@every 10s", "CRON_TZ=UTC * * * * *", "0 0 30 2 *", "nonsense"} {
		if _, err := scheduler.ValidateSchedule(bad, "UTC"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for _, good := range []string{"*/5 * * * *", "@hourly", "@daily", "@every 15m", "0 9 * * MON-FRI"} {
		if _, err := scheduler.ValidateSchedule(good, "Europe/Paris"); err != nil {
			t.Errorf("%q refused: %v", good, err)
		}
	}
	if err := scheduler.ValidateTimezone("Mars/Olympus"); err == nil {
		t.Error("unknown zone accepted")
	}
}
