package server_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/internal/testkit"
	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// startDebianTool runs one of Debian's prometheus packages' servers on a
// loopback port and returns its address (skipped when it is not installed,
// outside CI).
func startDebianTool(t *testing.T, name string, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed; .ci/run installs Debian's package", name)
		}
		t.Skipf("%s not installed (apt-get install %s)", name, name)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, append(args, "--web.listen-address=127.0.0.1:0", "--log.level=info")...)
	out := &testkit.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cancel(); <-exited })
	return childAddr(t, name, out, promListening, exited)
}

// An alert-triggered run's evidence pack from the real Prometheus and
// Alertmanager (Debian's packages): the series of the alert's own
// expression as Prometheus stored it from scraping this server, and the
// other active alert sharing the labels and the active silence as
// Alertmanager holds them, in the model's first request.
func TestInvestigationEvidenceFromRealPrometheusAndAlertmanager(t *testing.T) {
	fake := llmfake.New(t, llmfake.Text("Looked at the pack."))
	env := newEnv(t, withLLM(fake), func(c *server.Config) { c.MetricsToken = "prom-scrape-token" })
	dir := t.TempDir()
	promCfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n  - job_name: opsagent\n"+
		"    authorization:\n      type: Bearer\n      credentials: prom-scrape-token\n    static_configs:\n      - targets: ['%s']\n", strings.TrimPrefix(env.URL, "http://"))
	amCfg := "route:\n  receiver: devnull\nreceivers:\n  - name: devnull\n"
	for name, body := range map[string]string{"prometheus.yml": promCfg, "alertmanager.yml": amCfg} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	prom := startDebianTool(t, "prometheus", "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "tsdb"))
	am := startDebianTool(t, "prometheus-alertmanager", "--config.file="+filepath.Join(dir, "alertmanager.yml"),
		"--storage.path="+filepath.Join(dir, "am"), "--cluster.listen-address=")

	// Prometheus has scraped this server; Alertmanager holds another alert
	// of the service and a silence.
	waitUntil := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(45 * time.Second); !ok(); time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not after 45s", what)
			}
		}
	}
	// Three scrapes (one a second): the series starts well before the
	// incident opens, whose range query steps on whole seconds.
	waitUntil("prometheus scraping opsagent", func() bool {
		res, err := http.Get("http://" + prom + "/api/v1/query?query=" + url.QueryEscape(`count_over_time(up{job="opsagent"}[1m]) >= 3`))
		if err != nil {
			return false
		}
		defer res.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(res.Body)
		return strings.Contains(b.String(), `"job":"opsagent"`)
	})
	now := time.Now().UTC()
	post := func(path, body string) {
		t.Helper()
		waitUntil("alertmanager "+path, func() bool {
			res, err := http.Post("http://"+am+path, "application/json", strings.NewReader(body))
			if err != nil {
				return false
			}
			res.Body.Close()
			return res.StatusCode == 200
		})
	}
	post("/api/v2/alerts", `[{"labels":{"alertname":"HighErrorRate","service":"api","severity":"warning"},"annotations":{"summary":"5xx above 2%"},"startsAt":"`+now.Add(-5*time.Minute).Format(time.RFC3339)+`"}]`)
	post("/api/v2/silences", `{"matchers":[{"name":"instance","value":"db-2","isRegex":false,"isEqual":true}],"startsAt":"`+now.Format(time.RFC3339)+
		`","endsAt":"`+now.Add(time.Hour).Format(time.RFC3339)+`","createdBy":"ops@example.com","comment":"maintenance of db-2"}`)

	c := env.register("oncall@example.com")
	withProject(t, env, c)
	c.must(201, "POST", "/api/integrations", map[string]any{"kind": "prometheus", "name": "prom", "base_url": "http://" + prom})
	c.must(201, "POST", "/api/integrations", map[string]any{"kind": "alertmanager", "name": "am", "base_url": "http://" + am})
	h := newHook(t, env, c, map[string]any{"provider": "alertmanager"})
	gen := "http://" + prom + "/graph?g0.expr=" + url.QueryEscape(`up{job="opsagent"}`)
	alert := `{"version":"4","groupKey":"g-real","status":"firing","receiver":"opsagent","groupLabels":{"alertname":"HighLatency"},
		"commonLabels":{"alertname":"HighLatency","severity":"critical","service":"api"},"commonAnnotations":{},"externalURL":"http://` + am + `",
		"alerts":[{"status":"firing","labels":{"alertname":"HighLatency","severity":"critical","service":"api"},"annotations":{"summary":"p99 above 2s"},
		"startsAt":"` + now.Format(time.RFC3339) + `","endsAt":"0001-01-01T00:00:00Z","generatorURL":"` + gen + `","fingerprint":"fp-real"}]}`
	if r := h.post(t, []byte(alert), bearer(h.secret)); r.Status != 202 {
		t.Fatalf("alert: %d %s", r.Status, r.Body)
	}
	h.dispatch(t)
	inc := c.must(200, "GET", "/api/incidents", nil).JSON()["items"].([]any)[0].(map[string]any)["id"].(string)
	pollUntil(t, "the run's end", func() map[string]any { return c.must(200, "GET", "/api/incidents/"+inc, nil).JSON() },
		func(m map[string]any) bool { return m["latest_finding"] != nil })

	reqs := fake.Requests()
	if len(reqs) == 0 {
		t.Fatal("no model request")
	}
	var user string
	for _, m := range reqs[0].Messages {
		if m.Role == "user" {
			user = m.Content
			break
		}
	}
	order := []string{"<<<EVIDENCE ", "## Prometheus series", `query: up{job="opsagent"}`, "series: up{", `job="opsagent"}`, " 1\n",
		"## Alertmanager silences and related alerts", "HighErrorRate", "instance=db-2", "maintenance of db-2"}
	at := 0
	for _, w := range order {
		i := strings.Index(user[at:], w)
		if i < 0 {
			t.Fatalf("the pack lacks %q after offset %d:\n%s", w, at, user)
		}
		at += i + len(w)
	}
	if strings.Contains(user, "## Sources that gave nothing") {
		t.Fatalf("a real source failed:\n%s", user)
	}
}
