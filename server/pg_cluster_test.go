package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/store/storetest"
)

// newCluster starts n servers on one PostgreSQL database (issue 20): each
// has its own data directory with the first one's vault identity and token
// signing key, as every node of a deployment is given. Requests may go to any.
func newCluster(t *testing.T, n int, opts ...func(*server.Config)) []*testEnv {
	t.Helper()
	u := storetest.DatabaseURL(t)
	var nodes []*testEnv
	for i := 0; i < n; i++ {
		dir := t.TempDir()
		if i > 0 {
			// What every node of a deployment is given: the vault identity
			// and the token signing key (README, "Several servers").
			copyDir(t, filepath.Join(nodes[0].Dir, "vault"), filepath.Join(dir, "vault"))
			copyDir(t, filepath.Join(nodes[0].Dir, "keys"), filepath.Join(dir, "keys"))
			// Mail: a cluster sends through --smtp-url; the tests read one outbox.
			if err := os.MkdirAll(filepath.Join(nodes[0].Dir, "outbox"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(nodes[0].Dir, "outbox"), filepath.Join(dir, "outbox")); err != nil {
				t.Fatal(err)
			}
		}
		envDatabases.Store(dir, u)
		nodes = append(nodes, startEnv(t, dir, opts...))
	}
	return nodes
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

// An idempotency key and the dedupe window hold across nodes: copies of one
// delivery sent to three servers at once are one event and one run.
func TestClusterWebhookIdempotency(t *testing.T) {
	// A model that answers: with none, a node whose run failed would hold
	// the org's later webhook runs (webhook_run_hold.go) and this counts runs.
	nodes := newCluster(t, 3, withLLM(llmfake.New(t, llmfake.Always(llmfake.Text("looked")))))
	owner := nodes[0].register("owner@example.com")
	f := newHook(t, nodes[0], owner, map[string]any{"provider": "generic", "scheme": "bearer", "rate_limit_per_minute": 10000, "dedupe_window_seconds": 60})
	var wg sync.WaitGroup
	ids := make([]string, 30)
	dupIDs := make([]string, 30)
	start := make(chan struct{})
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			node := nodes[i%3]
			h := bearer(f.secret)
			h.Set("X-Idempotency-Key", "delivery-42")
			r := postDelivery(t, node.URL+"/api/webhooks/"+f.task, []byte(fmt.Sprintf(`{"title":"disk full","n":%d}`, i)), h)
			if r.Status != 202 {
				t.Errorf("copy %d on node %d: %d %s", i, i%3, r.Status, r.Body)
				return
			}
			ids[i] = r.JSON()["event_id"].(string)
			// The same body without a key: the dedupe window decides.
			r = postDelivery(t, node.URL+"/api/webhooks/"+f.task, []byte(`{"title":"same body"}`), bearer(f.secret))
			if r.Status != 202 {
				t.Errorf("body copy %d: %d %s", i, r.Status, r.Body)
				return
			}
			dupIDs[i] = r.JSON()["event_id"].(string)
		}()
	}
	close(start)
	wg.Wait()
	for i := range ids {
		if ids[i] != ids[0] || dupIDs[i] != dupIDs[0] {
			t.Fatalf("copies answered different events: %s/%s vs %s/%s", ids[i], dupIDs[i], ids[0], dupIDs[0])
		}
	}
	f.dispatch(t)
	if evs := f.events(t, ""); len(evs) != 2 {
		t.Fatalf("want 2 events, got %d", len(evs))
	}
	runs, err := nodes[1].DB.FindTaskRuns(t.Context(), orgOf(t, owner), f.task, 200)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs: %d %v", len(runs), err)
	}
}

// A cron task fires exactly once per slot however many servers tick, and
// when the scheduling server stops another takes over within 10 s.
func TestClusterCronOnceAndFailover(t *testing.T) {
	nodes := newCluster(t, 3)
	for _, n := range nodes {
		n.UseClock()
	}
	advance := func(d time.Duration, ns []*testEnv) {
		for _, n := range ns {
			n.Advance(d)
		}
	}
	c := nodes[0].register("cron@example.com")
	withProject(t, nodes[0], c)
	task := createTask(t, c, map[string]any{"name": "every minute", "prompt": "p", "schedule": "* * * * *"})["id"].(string)
	org := orgOf(t, c)
	count := func() int {
		runs, err := nodes[2].DB.FindTaskRuns(context.Background(), org, task, 500)
		if err != nil {
			t.Fatal(err)
		}
		return len(runs)
	}
	const slots = 8
	for i := 1; i <= slots; i++ {
		advance(time.Minute, nodes)
		// Every node ticks at once, besides the leader's own loop.
		var wg sync.WaitGroup
		for _, n := range nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := n.Srv.TaskScheduler().Tick(context.Background()); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if got := count(); got != i {
			t.Fatalf("slot %d: %d runs", i, got)
		}
	}
	// The first node led (it started first); it stops, the others tick on their own.
	nodes[0].close()
	rest := nodes[1:]
	advance(time.Minute, rest)
	start := time.Now()
	for count() != slots+1 {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("no server took over the scheduling within 10 s (%d runs)", count())
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("takeover and fire after %v", time.Since(start))
	time.Sleep(2 * time.Second)
	if got := count(); got != slots+1 {
		t.Fatalf("%d runs after the takeover, want %d", got, slots+1)
	}
}

// A chat turn running on one server is watched live from another, and
// Last-Event-ID replay works from a third.
func TestClusterChatWatchedFromAnotherNode(t *testing.T) {
	fake := llmfake.New(t, llmfake.Text("Clean /var/log on web-1, then check again.").After(5*time.Second))
	nodes := newCluster(t, 3, withLLM(fake))
	c := nodes[0].register("chat@example.com")
	withProject(t, nodes[0], c)
	res, first := c.stream("POST", "/api/chat", map[string]any{"message": "Disk is full on web-1"}, 0,
		func(e sseEvent) bool { return e.Type == "session" })
	sid := res.Header.Get("X-Session-ID")
	if sid == "" || len(first) != 1 {
		t.Fatalf("chat: %d %v", res.StatusCode, types(first))
	}
	c2 := *c
	c2.env = nodes[1]
	c3 := *c
	c3.env = nodes[2]
	// At the viewer's first event the turn (the model answers after 5 s) is
	// still running: the stream follows it live rather than replaying it.
	checked, live := false, false
	vres, evs := c2.stream("GET", "/api/sessions/"+sid+"/events", nil, 0, func(sseEvent) bool {
		if !checked {
			checked = true
			live = c3.must(200, "GET", "/api/sessions/detail/"+sid, nil).JSON()["status"] == "running"
		}
		return false
	})
	if len(evs) < 3 || evs[len(evs)-1].Type != "done" || lastOf(t, evs, "message").Data["content"] != "Clean /var/log on web-1, then check again." {
		t.Fatalf("the viewer on node 2 saw %v (%d)", types(evs), vres.StatusCode)
	}
	if !live {
		t.Fatal("the turn had ended before node 2's stream began: a replay, not a live view")
	}
	for i, e := range evs {
		if e.ID != int64(i+1) {
			t.Fatalf("event %d has id %d", i, e.ID)
		}
	}
	_, replay := c3.stream("GET", "/api/sessions/"+sid+"/events", nil, 2, nil)
	if len(replay) != len(evs)-2 || replay[0].ID != 3 {
		t.Fatalf("replay after 2 on node 3: %v", types(replay))
	}
}

// A task run waiting for approval on the scheduling server resumes once when
// the approval is decided on another server.
func TestClusterApprovalOnAnotherNodeResumesOnce(t *testing.T) {
	args := `{"command":"` + echoHello + `"}`
	fake := llmfake.New(t, llmfake.ToolCall("run_command", args).WithUsage(100, 10), llmfake.Text("Said hello.").WithUsage(100, 10))
	nodes := newCluster(t, 3, withLLM(fake), allowLocal)
	c := nodes[0].register("oncall@example.com")
	withProject(t, nodes[0], c)
	e := &e2e{env: nodes[0], fake: fake, c: c, work: filepath.Join(nodes[0].Dir, "work", c.Project)}
	tid := createTask(t, c, map[string]any{"name": "hello", "prompt": "say hello on the server"})["id"].(string)
	c2 := *c
	c2.env = nodes[1]
	sid := c2.must(202, "POST", "/api/tasks/"+tid+"/trigger", nil).JSON()["session_id"].(string)
	waitSession(t, &c2, sid, func(d map[string]any) bool { return d["waiting_approval"] == true })
	c3 := *c
	c3.env = nodes[2]
	_, evs := c3.stream("GET", "/api/sessions/"+sid+"/events", nil, 0, func(ev sseEvent) bool { return ev.Type == "approval.required" })
	id, _ := lastOf(t, evs, "approval.required").Data["approval_id"].(string)
	if id == "" || e.runs("hello.log") != 0 {
		t.Fatalf("approval %q, runs %d", id, e.runs("hello.log"))
	}
	c3.must(200, "POST", "/api/approvals/"+id+"/approve", map[string]any{})
	tk := e.waitTask(t, tid, func(tk map[string]any) bool { return tk["last_status"] != "running" })
	if tk["last_status"] != "completed" {
		t.Fatalf("task after the approval on another node: %v", tk)
	}
	if n := e.runs("hello.log"); n != 1 {
		t.Fatalf("the approved command ran %d times", n)
	}
	c3.must(409, "POST", "/api/approvals/"+id+"/approve", map[string]any{})
}
