package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/internal/testkit"
	"github.com/opsagent/opsagent/server"
)

// A real Prometheus (Debian's prometheus package) scrapes /metrics with the
// bearer token, and the request counter it stores moves after real requests.
func TestPrometheusScrapesMetrics(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("prometheus is not installed; .ci/run installs Debian's prometheus package")
		}
		t.Skip("prometheus not installed (apt-get install prometheus)")
	}
	env := newEnv(t, func(c *server.Config) { c.MetricsToken = "prom-scrape-token" })
	target := strings.TrimPrefix(env.URL, "http://")
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: opsagent
    authorization:
      type: Bearer
      credentials: prom-scrape-token
    static_configs:
      - targets: ['%s']
`, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "tsdb"), "--web.listen-address=127.0.0.1:0", "--log.level=info")
	out := &testkit.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cancel(); <-exited })
	promAddr := childAddr(t, "prometheus", out, promListening, exited)

	query := func(q string) (float64, bool) {
		res, err := http.Get("http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return 0, false
		}
		defer res.Body.Close()
		var body struct {
			Data struct {
				Result []struct {
					Value [2]any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if json.NewDecoder(res.Body).Decode(&body) != nil || len(body.Data.Result) == 0 {
			return 0, false
		}
		s, _ := body.Data.Result[0].Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		return v, err == nil
	}
	waitFor := func(q string, ok func(float64) bool) float64 {
		t.Helper()
		var v float64
		var found bool
		for deadline := time.Now().Add(45 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
			if v, found = query(q); found && ok(v) {
				return v
			}
		}
		t.Fatalf("prometheus: %s = %v (found %v); its log:\n%s", q, v, found, out)
		return 0
	}

	waitFor(`up{job="opsagent"}`, func(v float64) bool { return v == 1 })
	c := env.newClient()
	for i := 0; i < 3; i++ {
		c.must(200, "GET", "/api/version", nil)
	}
	series := `opsagent_http_requests_total{job="opsagent",route="/api/version",code="200"}`
	before := waitFor(series, func(v float64) bool { return v >= 3 })
	for i := 0; i < 5; i++ {
		c.must(200, "GET", "/api/version", nil)
	}
	waitFor(series, func(v float64) bool { return v >= before+5 })
	waitFor(`opsagent_ready{job="opsagent",check="database"}`, func(v float64) bool { return v == 1 })
	waitFor(`opsagent_db_size_bytes{job="opsagent"}`, func(v float64) bool { return v > 0 })
}
