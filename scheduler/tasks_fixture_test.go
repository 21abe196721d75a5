package scheduler_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/opsagent/opsagent/scheduler"
	"github.com/opsagent/opsagent/store"
)

// clock is a manual clock shared by the store and the scheduler.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.now = t.UTC(); c.mu.Unlock() }

// fixture is a real SQLite store in a temp dir with one org and project.
type fixture struct {
	t         testing.TB
	path      string
	db        *store.DB
	clk       *clock
	orgID     string
	projectID string
}

func newFixture(t testing.TB, start time.Time) *fixture {
	t.Helper()
	fx := &fixture{t: t, path: filepath.Join(t.TempDir(), "opsagent.db"), clk: &clock{now: start.UTC()}}
	fx.open()
	fx.orgID, fx.projectID = fx.addOrg("ops@example.com")
	return fx
}

func (fx *fixture) open() {
	db, err := store.Open(context.Background(), fx.path)
	if err != nil {
		fx.t.Fatal(err)
	}
	db.Now = fx.clk.Now
	fx.db = db
	fx.t.Cleanup(func() { db.Close() })
}

// reopen closes and reopens the database file, like a process restart.
func (fx *fixture) reopen() {
	fx.db.Close()
	fx.open()
}

func (fx *fixture) addOrg(email string) (orgID, projectID string) {
	o, err := fx.db.CreateAccount(context.Background(), &store.User{Email: email, PasswordHash: "x"})
	if err != nil {
		fx.t.Fatal(err)
	}
	p := &store.Project{OrgID: o.ID, Name: "prod"}
	if err := fx.db.CreateProject(context.Background(), p); err != nil {
		fx.t.Fatal(err)
	}
	return o.ID, p.ID
}

// task creates an enabled task in the fixture's project; mods adjust it.
func (fx *fixture) task(schedule string, mods ...func(*store.Task)) *store.Task {
	fx.t.Helper()
	t := &store.Task{OrgID: fx.orgID, ProjectID: fx.projectID, Name: "check " + schedule, Prompt: "check things",
		AgentType: "sre", Schedule: schedule, Timezone: "UTC", Enabled: true, MissedFirePolicy: "run_once",
		OverlapPolicy: "skip", TimeoutSeconds: 60, MaxSteps: 10}
	for _, m := range mods {
		m(t)
	}
	if err := fx.db.CreateTask(context.Background(), t, scheduler.NextRun); err != nil {
		fx.t.Fatal(err)
	}
	return t
}

func (fx *fixture) engine(exec scheduler.Executor, mods ...func(*scheduler.TaskOptions)) *scheduler.Tasks {
	o := scheduler.TaskOptions{Executor: exec, Now: fx.clk.Now}
	for _, m := range mods {
		m(&o)
	}
	e := scheduler.NewTasks(fx.db, o)
	fx.t.Cleanup(e.Stop)
	return e
}

func (fx *fixture) runs(taskID string) []store.AgentSession {
	fx.t.Helper()
	rs, err := fx.db.FindTaskRuns(context.Background(), fx.orgID, taskID, 1000)
	if err != nil {
		fx.t.Fatal(err)
	}
	return rs
}

func (fx *fixture) reload(t *store.Task) *store.Task {
	fx.t.Helper()
	got, err := fx.db.FindTaskByID(context.Background(), t.OrgID, t.ProjectID, t.ID)
	if err != nil {
		fx.t.Fatal(err)
	}
	return got
}

// recorder is a fake agent: it counts calls per session and, when gated,
// holds each run until released (to keep runs "in progress").
type recorder struct {
	mu      sync.Mutex
	calls   map[string]int
	order   []string
	runs    []*scheduler.Run
	gate    chan struct{} // nil: return at once
	started chan string
	outcome scheduler.Outcome
}

func newRecorder(gated bool) *recorder {
	r := &recorder{calls: map[string]int{}, started: make(chan string, 10000)}
	if gated {
		r.gate = make(chan struct{})
	}
	return r
}

func (r *recorder) Execute(ctx context.Context, run *scheduler.Run) (scheduler.Outcome, error) {
	r.mu.Lock()
	r.calls[run.SessionID]++
	r.order = append(r.order, run.SessionID)
	r.runs = append(r.runs, run)
	r.mu.Unlock()
	r.started <- run.SessionID
	if r.gate != nil {
		select {
		case <-r.gate:
		case <-ctx.Done():
			return scheduler.Outcome{}, ctx.Err()
		}
	}
	return r.outcome, nil
}

func (r *recorder) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.order)
}

// assertOnce fails unless every session was executed exactly once.
func (r *recorder) assertOnce(t testing.TB) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, n := range r.calls {
		if n != 1 {
			t.Fatalf("session %s executed %d times", id, n)
		}
	}
}

func (r *recorder) waitStarted(t testing.TB, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		select {
		case <-r.started:
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d runs started", i, n)
		}
	}
}

func mustTick(t testing.TB, e *scheduler.Tasks) scheduler.TickResult {
	t.Helper()
	r, err := e.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func statuses(rs []store.AgentSession) string {
	s := ""
	for i := len(rs) - 1; i >= 0; i-- { // oldest first
		s += fmt.Sprintf("%s ", rs[i].Status)
	}
	return s
}
