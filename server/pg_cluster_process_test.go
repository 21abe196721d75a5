package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/opsagent/opsagent/internal/testkit"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/store"
	"github.com/opsagent/opsagent/store/storetest"
)

// procCluster is n `opsagent serve` processes (the built binary) on one
// PostgreSQL database, each with its own data directory holding the first
// one's vault identity and token signing key (README, "Several servers"),
// and a round-robin proxy in front of them.
type procCluster struct {
	nodes []*testkit.Process
	dirs  []string
	lb    string
	db    string // the database URL
	clock string // the file the schedulers' test clock reads (main_testclock.go)
}

func startProcCluster(t *testing.T, n int, fake *llmfake.Server) *procCluster {
	t.Helper()
	pc := &procCluster{db: storetest.DatabaseURL(t)}
	bin := testkit.SharedBinary(t)
	base := t.TempDir()
	pc.clock = filepath.Join(base, "scheduler-clock")
	pc.setClock(t, 0)
	env := append(os.Environ(), "OPSAGENT_LOG_LEVEL=info", "OPSAGENT_TEST_SCHEDULER_CLOCK="+pc.clock)
	for i := 0; i < n; i++ {
		dir := filepath.Join(base, "n"+string(rune('1'+i)))
		if i > 0 {
			copyDir(t, filepath.Join(pc.dirs[0], "vault"), filepath.Join(dir, "vault"))
			copyDir(t, filepath.Join(pc.dirs[0], "keys"), filepath.Join(dir, "keys"))
			// Mail: a cluster sends through --smtp-url; the test reads one outbox.
			if err := os.MkdirAll(filepath.Join(pc.dirs[0], "outbox"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(pc.dirs[0], "outbox"), filepath.Join(dir, "outbox")); err != nil {
				t.Fatal(err)
			}
		}
		p := testkit.StartProcess(t, bin, []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--database-url", pc.db,
			"--signup", "open", "--allow-local-commands", "--shutdown-timeout", "2s",
			"--llm-provider", llm.ProviderOpenAI, "--llm-base-url", fake.BaseURL(llm.ProviderOpenAI), "--llm-api-key", llmfake.APIKey,
			"--llm-model", llmfake.Model, "--llm-prices", fakePrices}, env)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("node %d (%s) log:\n%s", i+1, p.URL, tail(p.Logs.String(), 4000))
			}
		})
		pc.nodes, pc.dirs = append(pc.nodes, p), append(pc.dirs, dir)
	}
	var urls []string
	for _, p := range pc.nodes {
		urls = append(urls, p.URL)
	}
	pc.lb = roundRobin(t, urls)
	return pc
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// setClock makes every node's scheduler run d ahead of the real clock.
func (pc *procCluster) setClock(t *testing.T, d time.Duration) {
	t.Helper()
	tmp := pc.clock + ".tmp"
	if err := os.WriteFile(tmp, []byte(d.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, pc.clock); err != nil {
		t.Fatal(err)
	}
}

// env is a testEnv whose requests go to url (a node or the proxy), for the
// suite's helpers; Srv is a local server used only for its route table.
func (pc *procCluster) env(t *testing.T, url string, local *testEnv) *testEnv {
	return &testEnv{t: t, URL: url, Srv: local.Srv, Dir: pc.dirs[0], Logs: &testkit.SyncBuffer{}}
}

// query runs sql on the cluster's database and returns its rows as text.
func (pc *procCluster) query(t *testing.T, sql string) [][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, pc.db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	res, err := conn.Exec(ctx, sql).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var out [][]string
	for _, r := range res {
		for _, row := range r.Rows {
			var cols []string
			for _, c := range row {
				cols = append(cols, string(c))
			}
			out = append(out, cols)
		}
	}
	return out
}

// Three server processes on one PostgreSQL behind a round-robin proxy (issue
// 20's "done when", the parts TestThreeNodeCluster in the root package does
// not cover): the tenancy sweep passes through the proxy; a task run
// triggered through node 2 waits for approval on the scheduling node 1, is
// approved on node 3, runs its command exactly once, and a second approval
// is refused; a cron task fires exactly once per slot over many slots (the
// schedulers' test-only clock walks a minute per step) while the scheduling
// node is killed with SIGKILL in the middle, the next slot fired by another
// node within 10 s.
func TestProcessCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	args := `{"command":"` + echoHello + `"}`
	fake := llmfake.New(t, llmfake.ToolCall("run_command", args), llmfake.Text("Said hello."), llmfake.Always(llmfake.Text("done")))
	pc := startProcCluster(t, 3, fake)
	local := newEnv(t, openSignup) // its route table only: the sweep walks every route
	start := time.Now()

	// Approval: triggered on node 2, run by the scheduling node 1, approved on node 3.
	n1, n2, n3 := pc.env(t, pc.nodes[0].URL, local), pc.env(t, pc.nodes[1].URL, local), pc.env(t, pc.nodes[2].URL, local)
	c := n1.register("oncall@example.com")
	c.Project = c.must(201, "POST", "/api/projects", map[string]any{"name": "prod"}).JSON()["id"].(string)
	tid := createTask(t, c, map[string]any{"name": "hello", "prompt": "say hello on the server"})["id"].(string)
	c2, c3 := *c, *c
	c2.env, c3.env = n2, n3
	sid := c2.must(202, "POST", "/api/tasks/"+tid+"/trigger", nil).JSON()["session_id"].(string)
	waitSession(t, &c2, sid, func(d map[string]any) bool { return d["waiting_approval"] == true })
	ran := func() int {
		n := 0
		for _, d := range pc.dirs {
			if b, err := os.ReadFile(filepath.Join(d, "work", c.Project, "hello.log")); err == nil {
				n += strings.Count(string(b), "\n")
			}
		}
		return n
	}
	_, evs := c3.stream("GET", "/api/sessions/"+sid+"/events", nil, 0, func(ev sseEvent) bool { return ev.Type == "approval.required" })
	id, _ := lastOf(t, evs, "approval.required").Data["approval_id"].(string)
	if id == "" || ran() != 0 {
		t.Fatalf("approval %q, command ran %d times before it", id, ran())
	}
	c3.must(200, "POST", "/api/approvals/"+id+"/approve", map[string]any{})
	d := waitSession(t, &c3, sid, func(d map[string]any) bool { return d["status"] != "running" })
	if d["status"] != "completed" || ran() != 1 {
		t.Fatalf("after the approval on node 3: session %v, command ran %d times", d["status"], ran())
	}
	c3.must(409, "POST", "/api/approvals/"+id+"/approve", map[string]any{})
	c2.must(409, "POST", "/api/approvals/"+id+"/approve", map[string]any{})
	t.Logf("approval on node 3 resumed the run once (%v)", time.Since(start).Round(time.Millisecond))

	// The tenancy sweep through the proxy.
	start = time.Now()
	isolationSweep(t, pc.env(t, pc.lb, local))
	t.Logf("sweep through the proxy: %v", time.Since(start).Round(time.Millisecond))

	// Cron: one fire per slot across the nodes, no slot skipped or folded,
	// with the scheduling node killed in the middle.
	start = time.Now()
	cron := createTask(t, c, map[string]any{"name": "every minute", "prompt": "check", "schedule": "* * * * *"})["id"].(string)
	const slots, killAt = 12, 6
	// Requests go to a node that is not killed; the killed one is the scheduling node.
	leader := pc.leader(t)
	alive := *c
	alive.env = pc.env(t, pc.nodes[(leader+1)%len(pc.nodes)].URL, local)
	var want []string
	for i := 1; i <= slots; i++ {
		next, err := time.Parse(time.RFC3339Nano, alive.must(200, "GET", "/api/tasks/"+cron, nil).JSON()["next_run_at"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if len(want) > 0 {
			if prev, _ := time.Parse(time.RFC3339Nano, want[len(want)-1]); next.Sub(prev) != time.Minute {
				t.Fatalf("slot %d: next_run_at %v is not a minute after the last fire %v", i, next, prev)
			}
		}
		want = append(want, next.UTC().Format(time.RFC3339Nano))
		var killed time.Time
		if i == killAt {
			pc.nodes[leader].Kill()
			killed = time.Now()
		}
		pc.setClock(t, time.Until(next)+300*time.Millisecond)
		deadline := time.Now().Add(10 * time.Second)
		for pc.fires(t, cron) < i {
			if time.Now().After(deadline) {
				t.Fatalf("slot %d (%v) not fired within 10 s; fires %v", i, next, pc.firesList(t, cron))
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !killed.IsZero() {
			t.Logf("after kill -9 of the scheduling node, the next slot fired after %v", time.Since(killed).Round(time.Millisecond))
		}
	}
	time.Sleep(2 * time.Second) // a duplicate would show up by now (every node ticks each second)
	got := pc.firesList(t, cron)
	if len(got) != slots {
		t.Fatalf("%d fires over %d slots: %v", len(got), slots, got)
	}
	for i, f := range got {
		if at := store.ParseTS(f[0]); !at.Equal(mustTime(t, want[i])) || f[1] != "0" {
			t.Fatalf("fire %d: scheduled for %s (missed %s), want %s once; all %v", i+1, f[0], f[1], want[i], got)
		}
	}
	t.Logf("cron: %d slots, one fire each, through a kill -9 (%v)", slots, time.Since(start).Round(time.Millisecond))
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// leader is the index of the node that holds the scheduling (its log says so).
func (pc *procCluster) leader(t *testing.T) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for i, p := range pc.nodes {
			if strings.Contains(p.Logs.String(), `msg="leadership taken"`) {
				return i
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no node says it took the scheduling")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// fires counts the recorded fires of a task.
func (pc *procCluster) fires(t *testing.T, task string) int {
	return len(pc.firesList(t, task))
}

// firesList is every recorded fire of a scheduled task (scheduled_for,
// missed_fires), oldest first.
func (pc *procCluster) firesList(t *testing.T, task string) [][]string {
	t.Helper()
	if !store.ValidID(task) {
		t.Fatalf("bad task id %q", task)
	}
	return pc.query(t, `SELECT scheduled_for, missed_fires FROM task_runs WHERE task_id = '`+task+`' AND scheduled_for IS NOT NULL ORDER BY scheduled_for`)
}
