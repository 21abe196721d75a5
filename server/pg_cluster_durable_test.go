package server_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/store"
)

// Runs that survive a dead node, and ingest that survives contention
// (issue 34), on three `opsagent serve` processes sharing PostgreSQL.

// kill -9 of the node running a chat turn: another node resumes the turn
// from its last checkpoint within two run leases, and it completes; a
// viewer on a third node follows it to the end in one stream.
func TestProcessClusterResumesADeadNodesTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	fake := llmfake.New(t,
		llmfake.ToolCall("search_knowledge", `{"query":"disk"}`),
		llmfake.Hang(), // the second model call, on the node that dies
		llmfake.Always(llmfake.Text("The disk filled with old logs.")))
	pc := startProcCluster(t, 3, fake)
	local := newEnv(t, openSignup)
	n1, n3 := pc.env(t, pc.nodes[0].URL, local), pc.env(t, pc.nodes[2].URL, local)
	c := n1.register("oncall@example.com")
	c.Project = c.must(201, "POST", "/api/projects", map[string]any{"name": "prod"}).JSON()["id"].(string)

	req, _ := http.NewRequest("POST", pc.nodes[0].URL+"/api/chat", strings.NewReader(`{"message":"why is the disk full?"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("X-Project-ID", c.Project)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sid := res.Header.Get("X-Session-ID")
	res.Body.Close()
	for end := time.Now().Add(20 * time.Second); len(fake.Requests()) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the turn did not reach its second model call")
		}
	}
	pc.nodes[0].Kill()
	killed := time.Now()

	c3 := *c
	c3.env = n3
	_, evs := c3.stream("GET", "/api/sessions/"+sid+"/events", nil, 0, func(ev sseEvent) bool { return ev.Type == "done" })
	took := time.Since(killed)
	if len(evs) == 0 || evs[len(evs)-1].Type != "done" || evs[len(evs)-1].Data["status"] != "completed" {
		t.Fatalf("node 3's stream of the resumed turn: %v", types(evs))
	}
	lastOf(t, evs, "run.resumed")
	for i := 1; i < len(evs); i++ {
		if evs[i].ID <= evs[i-1].ID {
			t.Fatalf("event %d after %d: shown twice or out of order", evs[i].ID, evs[i-1].ID)
		}
	}
	if took > 2*store.RunLease {
		t.Fatalf("the dead node's turn completed %v after kill -9, want within two run leases (%v)", took, 2*store.RunLease)
	}
	t.Logf("kill -9 of the node running the turn: resumed and completed elsewhere %v later", took.Round(time.Millisecond))
	d := c3.must(200, "GET", "/api/sessions/detail/"+sid, nil).JSON()
	if d["status"] != "completed" {
		t.Fatalf("session after the resume: %v", d)
	}
}

// Webhook ingest through a round-robin proxy on three nodes: 64 connections
// for 30 s (OPSAGENT_TEST_INGEST_SECONDS shortens it) get no 5xx, and every
// delivery acknowledged with 202 is stored exactly once.
func TestProcessClusterIngestUnderContention(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	fake := llmfake.New(t, llmfake.Always(llmfake.Text("looked")))
	pc := startProcCluster(t, 3, fake)
	local := newEnv(t, openSignup)
	n1 := pc.env(t, pc.nodes[0].URL, local)
	c := n1.register("oncall@example.com")
	c.Project = c.must(201, "POST", "/api/projects", map[string]any{"name": "prod"}).JSON()["id"].(string)
	tid := createTask(t, c, map[string]any{"name": "on alert", "prompt": "look", "overlap_policy": "queue"})["id"].(string)
	hook := c.must(200, "PUT", "/api/tasks/"+tid+"/webhook", map[string]any{"provider": "generic", "scheme": "bearer",
		"rate_limit_per_minute": 100000, "dedupe_window_seconds": 0}).JSON()
	secret := hook["secret"].(string)

	dur := 30 * time.Second
	if s := ingestSeconds(); s > 0 {
		dur = time.Duration(s) * time.Second
	}
	var acked sync.Map // event id -> body
	var sent, ok, failed atomic.Int64
	var statusMu sync.Mutex
	statuses := map[int]int{}
	stop := time.Now().Add(dur)
	var wg sync.WaitGroup
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := &http.Client{Timeout: 30 * time.Second}
			for i := 0; time.Now().Before(stop); i++ {
				body := fmt.Sprintf(`{"title":"alert %d-%d"}`, w, i)
				r, _ := http.NewRequest("POST", pc.lb+"/api/webhooks/"+tid, strings.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Authorization", "Bearer "+secret)
				sent.Add(1)
				resp, err := cl.Do(r)
				if err != nil {
					failed.Add(1)
					continue
				}
				var out struct {
					EventID string `json:"event_id"`
				}
				_ = decodeJSON(resp.Body, &out)
				resp.Body.Close()
				statusMu.Lock()
				statuses[resp.StatusCode]++
				statusMu.Unlock()
				if resp.StatusCode == http.StatusAccepted {
					acked.Store(out.EventID, body)
					ok.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	rows := pc.query(t, "SELECT id, body_hash FROM webhook_events WHERE task_id = '"+tid+"'")
	stored := map[string]string{}
	perHash := map[string]int{}
	for _, r := range rows {
		stored[r[0]] = r[1]
		perHash[r[1]]++
	}
	lost, twice := 0, 0
	acked.Range(func(k, _ any) bool {
		h, found := stored[k.(string)]
		if !found {
			lost++
		} else if perHash[h] != 1 {
			twice++
		}
		return true
	})
	t.Logf("ingest on three nodes, 64 connections, %v: %d sent, %d acknowledged, %d stored, statuses %v, %d transport errors",
		dur, sent.Load(), ok.Load(), len(rows), statuses, failed.Load())
	// What it took: the store's retries of lost races, per node (/metrics).
	for i, n := range pc.nodes {
		if res, err := http.Get(n.URL + "/metrics"); err == nil {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			for _, l := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(l, "opsagent_db_write_retries") {
					t.Logf("node %d: %s", i+1, l)
				}
			}
		}
	}
	for st, n := range statuses {
		if st >= 500 {
			t.Errorf("%d deliveries answered %d", n, st)
		}
	}
	if lost != 0 || twice != 0 || ok.Load() == 0 || failed.Load() != 0 {
		t.Fatalf("%d acknowledged deliveries lost, %d stored twice (%d acknowledged, %d transport errors)", lost, twice, ok.Load(), failed.Load())
	}
}

func ingestSeconds() int {
	var n int
	_, _ = fmt.Sscanf(os.Getenv("OPSAGENT_TEST_INGEST_SECONDS"), "%d", &n)
	return n
}
