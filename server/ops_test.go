package server_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server"
)

type readyBody struct {
	Status string `json:"status"`
	Checks []struct {
		Name   string `json:"name"`
		OK     bool   `json:"ok"`
		Detail string `json:"detail"`
	} `json:"checks"`
}

func (r readyBody) check(t *testing.T, name string) (bool, string) {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			return c.OK, c.Detail
		}
	}
	t.Fatalf("readyz has no %q check: %+v", name, r)
	return false, ""
}

// readyz polls /readyz until its status is want (its answer is cached for a
// second) and returns the last body.
func readyz(t *testing.T, env *testEnv, want int) readyBody {
	t.Helper()
	c := env.newClient()
	var r *resp
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if r = c.do("GET", "/readyz", nil); r.Status == want {
			break
		}
	}
	var body readyBody
	r.decode(t, &body)
	if r.Status != want {
		t.Fatalf("/readyz stayed %d, want %d: %s", r.Status, want, r.Body)
	}
	return body
}

func TestHealthzAndReadyzNameEachCheck(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	h := env.newClient().must(200, "GET", "/healthz", nil).JSON()
	if h["status"] != "ok" || h["version"] != server.Version {
		t.Errorf("healthz = %v", h)
	}
	body := readyz(t, env, 200)
	if body.Status != "ready" || len(body.Checks) != 5 {
		t.Fatalf("readyz = %+v", body)
	}
	for _, name := range []string{"database", "disk", "rag_index", "scheduler", "vault"} {
		if ok, detail := body.check(t, name); !ok || detail == "" {
			t.Errorf("%s: ok %v detail %q", name, ok, detail)
		}
	}
	// Probes are logged at debug level only, never as the info request line.
	if strings.Contains(env.Logs.String(), `level=INFO msg=request method=GET route=/readyz`) {
		t.Errorf("readyz logged at info")
	}
}

// The disk check flips when the data directory's free space crosses the
// minimum: the test sets the minimum 256 MiB under the current free space,
// then takes 512 MiB with a real allocation and gives it back.
func TestReadyzFailsBelowTheDiskMinimum(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Skipf("statfs: %v", err)
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if free < 2<<30 {
		t.Skipf("only %d bytes free; the test needs 2 GiB of room", free)
	}
	env := startEnv(t, dir, func(c *server.Config) { c.DiskMinFree = server.ByteSize(free - 256<<20) })
	readyz(t, env, 200)

	ballast := filepath.Join(dir, "ballast")
	f, err := os.Create(ballast)
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(ballast)
	if err := syscall.Fallocate(int(f.Fd()), 0, 0, 512<<20); err != nil {
		f.Close()
		t.Skipf("fallocate is not supported here: %v", err)
	}
	f.Close()
	body := readyz(t, env, 503)
	if ok, detail := body.check(t, "disk"); ok || !strings.Contains(detail, "minimum") {
		t.Errorf("disk check = %v %q", ok, detail)
	}
	if body.Status != "not_ready" {
		t.Errorf("status = %q", body.Status)
	}
	os.Remove(ballast)
	readyz(t, env, 200)
}

// The database check writes: a write lock held by another process (here a
// second connection, as a backup tool or a stray sqlite3 shell would) makes
// it fail and name the cause; releasing the lock makes the server ready.
func TestReadyzFailsWhileTheDatabaseRefusesWrites(t *testing.T) {
	applianceOnly(t, "the test locks the SQLite file from another connection")
	t.Parallel()
	env := newEnv(t)
	readyz(t, env, 200)
	other, err := sql.Open("sqlite", "file:"+filepath.Join(env.Dir, "opsagent.db")+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx := context.Background()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	body := readyz(t, env, 503)
	if ok, detail := body.check(t, "database"); ok || !strings.Contains(detail, "not writable") {
		t.Errorf("database check = %v %q", ok, detail)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	readyz(t, env, 200)
}

func TestMetricsLoopbackOnlyOrBearerToken(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := env.newClient()
	c.must(200, "GET", "/api/version", nil)
	r := c.must(200, "GET", "/metrics", nil)
	text := string(r.Body)
	for _, want := range []string{
		`opsagent_http_requests_total{code="200",method="GET",route="/api/version"} 1`,
		`opsagent_http_request_duration_seconds_count{method="GET",route="/api/version"} 1`,
		"opsagent_db_size_bytes ", "opsagent_db_wal_size_bytes ", "opsagent_approvals_pending 0",
		`opsagent_ready{check="database"} 1`, "go_goroutines ", "process_resident_memory_bytes ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if !strings.Contains(text, "opsagent_connectors_connected 0") {
		t.Errorf("no connector gauge (the hub reports how many are online)")
	}
	// Through a reverse proxy on the same host the peer is loopback, but the
	// caller is not: forwarded requests are refused without a token.
	c.Header.Set("X-Forwarded-For", "203.0.113.9")
	if r := c.do("GET", "/metrics", nil); r.Status != 403 || r.JSON()["code"] != "metrics_loopback_only" {
		t.Errorf("forwarded scrape: %d %s", r.Status, r.Body)
	}

	tok := newEnv(t, func(cfg *server.Config) { cfg.MetricsToken = "scrape-secret-1" })
	c = tok.newClient()
	if r := c.do("GET", "/metrics", nil); r.Status != 401 || r.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("no token: %d %v", r.Status, r.Header)
	}
	c.Token = "scrape-secret-2"
	if r := c.do("GET", "/metrics", nil); r.Status != 401 {
		t.Errorf("wrong token: %d", r.Status)
	}
	c.Token = "scrape-secret-1"
	c.Header.Set("X-Forwarded-For", "203.0.113.9")
	c.must(200, "GET", "/metrics", nil)
	if strings.Contains(tok.Logs.String(), "scrape-secret") {
		t.Errorf("the metrics token reached the log")
	}
}

// Every request logs one line with its request id, route template (not the
// raw path), status, duration and the caller's org and project ids.
func TestRequestLogLine(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	owner := env.register("logline@example.com")
	owner.Header.Set("X-Request-ID", "req-logline-1")
	owner.Project = owner.must(201, "POST", "/api/projects", map[string]any{"name": "logline prod"}).JSON()["id"].(string)
	owner.must(200, "GET", "/api/tasks", nil)
	var line string
	for _, l := range strings.Split(env.Logs.String(), "\n") {
		if strings.Contains(l, "request_id=req-logline-1") && strings.Contains(l, "route=/api/tasks ") {
			line = l
		}
	}
	for _, want := range []string{"msg=request", "status=200", "duration_ms=", "user_id=", "org_id=", "project_id=" + owner.Project, "method=GET"} {
		if !strings.Contains(line, want) {
			t.Errorf("request line lacks %q: %s", want, line)
		}
	}
	if strings.Contains(env.Logs.String(), owner.Token) {
		t.Errorf("the access token reached the log")
	}
}
