package server_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// The engines report through telemetry: a chat turn counts a run, its steps,
// tokens and cost; webhook deliveries count accepted, duplicate and refused
// events and the group commit.
func TestEngineMetricsMove(t *testing.T) {
	t.Parallel()
	fake := llmfake.New(t, llmfake.Text("All good.").WithUsage(1000, 500))
	env := newEnv(t, withLLM(fake))
	c := env.register("metrics@example.com")
	withProject(t, env, c)
	res, evs := c.stream("POST", "/api/chat", map[string]any{"message": "status?"}, 0, nil)
	if res.StatusCode != 200 || evs[len(evs)-1].Type != "done" {
		t.Fatalf("chat: %d %v", res.StatusCode, types(evs))
	}

	// The runner counts the turn just after it publishes done (launch.go),
	// so a scrape right after the stream can come first: wait for the run
	// and its model usage (then the values below are checked exactly).
	text := ""
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		text = string(c.must(200, "GET", "/metrics", nil).Body)
		if (strings.Contains(text, `opsagent_agent_runs_total{outcome="completed",trigger="web"}`) && // RunFinished, then LLMUsage
			strings.Contains(text, `opsagent_llm_cost_usd_total{model="fake-model"`)) || time.Now().After(deadline) {
			break
		}
	}

	// Webhooks on a server without an LLM (the task runs it starts fail fast).
	env = newEnv(t)
	c = env.register("metrics@example.com")
	f := newHook(t, env, c, map[string]any{"provider": "alertmanager", "dedupe_window_seconds": 60})
	body := amAlert("g1", "fp1", "firing")
	f.post(t, body, bearer(f.secret)) // accepted
	f.post(t, body, bearer(f.secret)) // duplicate within the window
	if r := f.post(t, body, bearer("whsec_wrong")); r.Status != 401 {
		t.Fatalf("bad secret: %d", r.Status)
	}

	text += string(c.must(200, "GET", "/metrics", nil).Body)
	for _, want := range []string{
		`opsagent_agent_runs_total{outcome="completed",trigger="web"} 1`,
		`opsagent_agent_steps_total 1`,
		`opsagent_llm_tokens_total{kind="input",model="fake-model",provider="openai"} 1000`,
		`opsagent_llm_tokens_total{kind="output",model="fake-model",provider="openai"} 500`,
		`opsagent_llm_cost_usd_total{model="fake-model",provider="openai"} 2`,
		`opsagent_webhook_events_accepted_total 1`,
		`opsagent_webhook_events_duplicate_total 1`,
		`opsagent_webhook_verification_failures_total 1`,
		`opsagent_webhook_commit_batch_size_count 2`,
		`opsagent_sse_viewers{route="/api/chat"} 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	checkOpsDocsUseRealMetrics(t, text)
	if t.Failed() {
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "opsagent_agent") || strings.HasPrefix(l, "opsagent_llm") || strings.HasPrefix(l, "opsagent_webhook_events") {
				t.Log(l)
			}
		}
	}
}

// The shipped dashboard and alert rules only name metrics the server
// exports, and the rules pass promtool where it is installed.
func checkOpsDocsUseRealMetrics(t *testing.T, scraped string) {
	t.Helper()
	name := regexp.MustCompile(`opsagent_[a-z_]+`)
	for _, f := range []string{"../deploy/grafana/opsagent-dashboard.json", "../deploy/prometheus/alerts.yml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range name.FindAllString(string(b), -1) {
			base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
			if !strings.Contains(scraped, "# TYPE "+base+" ") {
				t.Errorf("%s uses %s, which /metrics does not export", f, n)
			}
		}
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		if out, err := exec.Command(promtool, "check", "rules", "../deploy/prometheus/alerts.yml").CombinedOutput(); err != nil {
			t.Errorf("promtool check rules: %v\n%s", err, out)
		}
	}
}
