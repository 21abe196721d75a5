package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/opsagent/opsagent/server/sandbox"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/opsagent/opsagent/internal/testkit"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/store/storetest"
)

// The test binary doubles as the server of the cluster test: started with
// OPSAGENT_TEST_CHILD=serve it runs `opsagent serve` with its arguments.
func TestMain(m *testing.M) {
	sandbox.Init()
	if os.Getenv("OPSAGENT_TEST_CHILD") == "serve" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "opsagent:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// node is one server process of the cluster.
type node struct {
	url string
	dir string
	cmd *exec.Cmd
	log *testkit.SyncBuffer
}

func startNode(t *testing.T, dir, dbURL string, fake *llmfake.Server) *node {
	t.Helper()
	// Port 0, the bound address read from the log: a port picked free here
	// and handed to the child could be bound by another test's server
	// first, which would then answer for this node.
	cmd := exec.Command(os.Args[0], "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--database-url", dbURL, "--signup", "open",
		"--llm-provider", llm.ProviderOpenAI, "--llm-base-url", fake.BaseURL(llm.ProviderOpenAI), "--llm-api-key", llmfake.APIKey,
		"--llm-model", llmfake.Model, "--log-level", "info", "--shutdown-timeout", "2s")
	cmd.Env = append(os.Environ(), "OPSAGENT_TEST_CHILD=serve")
	n := &node{dir: dir, cmd: cmd, log: &testkit.SyncBuffer{}}
	cmd.Stdout, cmd.Stderr = n.log, n.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("node %s log:\n%s", n.url, n.log.String())
		}
	})
	for end := time.Now().Add(60 * time.Second); ; {
		if m := testkit.Listening.FindStringSubmatch(n.log.String()); m != nil && n.url == "" {
			n.url = "http://" + m[1]
		}
		if n.url != "" {
			if res, err := http.Get(n.url + "/healthz"); err == nil {
				res.Body.Close()
				if res.StatusCode == 200 {
					return n
				}
			}
		}
		if time.Now().After(end) {
			t.Fatalf("node %s did not come up:\n%s", n.url, n.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// proxy is a round-robin load balancer on loopback that stops sending to a
// node it could not reach (as Caddy's or nginx's passive health checks do).
func proxy(t *testing.T, nodes []*node) string {
	t.Helper()
	var next atomic.Uint64
	var mu sync.Mutex
	down := map[string]bool{}
	pick := func() *url.URL {
		mu.Lock()
		defer mu.Unlock()
		for range nodes {
			n := nodes[next.Add(1)%uint64(len(nodes))]
			if !down[n.url] {
				u, _ := url.Parse(n.url)
				return u
			}
		}
		u, _ := url.Parse(nodes[0].url)
		return u
	}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(pick()); r.Out.Host = r.In.Host },
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			mu.Lock()
			down["http://"+r.URL.Host] = true
			mu.Unlock()
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: rp}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

type caller struct {
	t       *testing.T
	token   string
	project string
}

func (c *caller) do(method, u string, body any) (int, map[string]any, http.Header) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, u, rd)
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.project != "" {
		req.Header.Set("X-Project-ID", c.project)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, u, err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out, res.Header
}

// must retries a 502 (the proxy found a node gone) like a client would.
func (c *caller) must(want int, method, u string, body any) map[string]any {
	c.t.Helper()
	for i := 0; ; i++ {
		st, out, _ := c.do(method, u, body)
		if st == http.StatusBadGateway && i < 5 {
			continue
		}
		if st != want {
			c.t.Fatalf("%s %s: %d %v, want %d", method, u, st, out, want)
		}
		return out
	}
}

// Three server processes on one PostgreSQL database behind a round-robin
// proxy (issue 20): a chat on node 1 streams live on node 2, webhook
// deliveries acknowledged before kill -9 of a node are all kept, and kill -9
// of the scheduling node hands the scheduling to another within 10 s.
func TestThreeNodeCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	dbURL := storetest.DatabaseURL(t)
	fake := llmfake.New(t, llmfake.Text("Clean /var/log on web-1.").After(1500*time.Millisecond), llmfake.Always(llmfake.Text("done")))
	base := t.TempDir()
	dirs := []string{filepath.Join(base, "n1"), filepath.Join(base, "n2"), filepath.Join(base, "n3")}
	nodes := []*node{startNode(t, dirs[0], dbURL, fake)}
	// Every node is given the first one's vault identity and token signing key.
	for _, d := range dirs[1:] {
		for _, sub := range []string{"vault", "keys"} {
			if err := os.CopyFS(filepath.Join(d, sub), os.DirFS(filepath.Join(dirs[0], sub))); err != nil {
				t.Fatal(err)
			}
		}
		nodes = append(nodes, startNode(t, d, dbURL, fake))
	}
	lb := proxy(t, nodes)
	c := &caller{t: t}
	reg := c.must(201, "POST", lb+"/api/auth/register", map[string]any{"email": "owner@example.com", "password": "correct horse battery", "name": "owner"})
	c.token = reg["access_token"].(string)
	c.project = c.must(201, "POST", lb+"/api/projects", map[string]any{"name": "prod"})["id"].(string)

	// A chat on node 1, watched from node 2 while it runs.
	req, _ := http.NewRequest("POST", nodes[0].url+"/api/chat", strings.NewReader(`{"message":"Disk is full on web-1"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("X-Project-ID", c.project)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sid := res.Header.Get("X-Session-ID")
	res.Body.Close() // the turn goes on without its first viewer
	req, _ = http.NewRequest("GET", nodes[1].url+"/api/sessions/"+sid+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("X-Project-ID", c.project)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	stream, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(stream), "Clean /var/log on web-1.") || !strings.Contains(string(stream), "event: done") {
		t.Fatalf("node 2's stream of node 1's chat:\n%s", stream)
	}

	// Webhook ingest through the proxy while node 2 is killed.
	task := c.must(201, "POST", lb+"/api/tasks", map[string]any{"name": "on alert", "prompt": "look", "overlap_policy": "queue"})["id"].(string)
	hook := c.must(200, "PUT", lb+"/api/tasks/"+task+"/webhook", map[string]any{"provider": "generic", "scheme": "bearer", "rate_limit_per_minute": 100000, "dedupe_window_seconds": 0})
	secret := hook["secret"].(string)
	var acked sync.Map
	var sent, ok atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := &http.Client{Timeout: 10 * time.Second}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf(`{"title":"alert %d-%d"}`, w, i)
				r, _ := http.NewRequest("POST", lb+"/api/webhooks/"+task, strings.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Authorization", "Bearer "+secret)
				sent.Add(1)
				resp, err := cl.Do(r)
				if err != nil {
					continue
				}
				var out map[string]any
				_ = json.NewDecoder(resp.Body).Decode(&out)
				resp.Body.Close()
				if resp.StatusCode == http.StatusAccepted {
					acked.Store(out["event_id"].(string), true)
					ok.Add(1)
				}
			}
		}()
	}
	time.Sleep(time.Second)
	_ = nodes[1].cmd.Process.Signal(syscall.SIGKILL)
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()
	stored := map[string]bool{}
	for off := 0; ; off += 200 {
		page := c.must(200, "GET", fmt.Sprintf("%s/api/tasks/%s/webhook/events?limit=200&offset=%d", nodes[2].url, task, off), nil)
		items, _ := page["items"].([]any)
		for _, it := range items {
			stored[it.(map[string]any)["id"].(string)] = true
		}
		if len(items) < 200 {
			break
		}
	}
	lost := 0
	acked.Range(func(k, _ any) bool {
		if !stored[k.(string)] {
			lost++
		}
		return true
	})
	t.Logf("webhook ingest: %d sent, %d acknowledged, %d stored, %d acknowledged but lost", sent.Load(), ok.Load(), len(stored), lost)
	if lost != 0 || ok.Load() == 0 {
		t.Fatalf("%d acknowledged deliveries lost (%d acknowledged)", lost, ok.Load())
	}

	// kill -9 of the scheduling node (the first started leads): a run
	// triggered afterwards is dispatched by another node within 10 s.
	_ = nodes[0].cmd.Process.Signal(syscall.SIGKILL)
	killed := time.Now()
	manual := c.must(201, "POST", nodes[2].url+"/api/tasks", map[string]any{"name": "manual", "prompt": "say done"})["id"].(string)
	run := c.must(202, "POST", nodes[2].url+"/api/tasks/"+manual+"/trigger", nil)["session_id"].(string)
	for {
		_, d, _ := c.do("GET", nodes[2].url+"/api/sessions/detail/"+run, nil)
		if d["status"] != nil && d["status"] != "pending" {
			t.Logf("after kill -9 of the scheduling node, the next run started after %v (status %v)", time.Since(killed), d["status"])
			break
		}
		if time.Since(killed) > 10*time.Second {
			t.Fatalf("no node took over the scheduling within 10 s: run %v", d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
