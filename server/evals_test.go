package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// waitEval polls an evaluation until it has finished.
func waitEval(t *testing.T, c *client, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		e := c.must(200, "GET", "/api/evals/"+id, nil).JSON()
		if e["status"] != "running" {
			return e
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("evaluation %s still running after 60 s", id)
	return nil
}

// An evaluation over the API replays a scenario with the org's LLM and
// reports it; while it runs, the project's real integration, connector
// and chat channel receive nothing, though the scenario has the model
// query Prometheus, run a command on a host and could answer anywhere.
func TestEvalOverTheAPIReachesNothingReal(t *testing.T) {
	var touched atomic.Int64
	real := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		touched.Add(1)
		w.WriteHeader(200)
		io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
	}))
	defer real.Close()
	ce := newChannelEnv(t,
		llmfake.ToolCall("prometheus_query", `{"query":"node_filesystem_avail_bytes"}`),
		llmfake.ToolCall("run_command", `{"target":"db-1","command":"df -h /var"}`),
		llmfake.ToolCall("report_finding", `{"summary":"/var is full: logs stopped rotating","hypotheses":[{"cause":"log rotation broke","confidence":"high","evidence":["ev1"]}],"impact":"db-1 stops writing","next_steps":[]}`),
		llmfake.Text("Log rotation broke on db-1."))
	fake, c := ce.fake, ce.owner
	// The project's real surroundings: an integration on a loopback server
	// that counts every request, a connector named like the scenario's
	// host, and a Slack channel (slack-go's test server records every call).
	c.must(201, "POST", "/api/integrations", map[string]any{"kind": "prometheus", "name": "main", "base_url": real.URL})
	c.must(201, "POST", "/api/connectors", map[string]any{"name": "db-1"})
	ce.slackChannel(t, nil)
	before := touched.Load()
	slackBefore := ce.slack.count(func(chatCall) bool { return true })

	scenario, err := os.ReadFile("../testdata/evals/disk-full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	org := c.Project
	c.Project = ""
	started := c.must(202, "POST", "/api/evals", map[string]any{"scenarios": []map[string]any{{"name": "disk-full.yaml", "yaml": string(scenario)}}}).JSON()
	c.Project = org
	done := waitEval(t, c, started["id"].(string))
	if done["status"] != "completed" {
		t.Fatalf("evaluation: %v", done)
	}
	rep := done["report"].(map[string]any)
	runs := rep["runs"].([]any)
	if len(runs) != 1 {
		t.Fatalf("runs: %v", runs)
	}
	run := runs[0].(map[string]any)
	if run["pass"] != true {
		t.Fatalf("the scripted investigation should pass: %v", run["failures"])
	}
	calls := run["calls"].([]any)
	if len(calls) != 2 || calls[0].(map[string]any)["matched"] != true || calls[1].(map[string]any)["matched"] != true {
		t.Fatalf("the simulated world should answer both calls: %v", calls)
	}
	if n := touched.Load() - before; n != 0 {
		t.Fatalf("the real Prometheus integration received %d requests during the evaluation", n)
	}
	if n := ce.slack.count(func(chatCall) bool { return true }) - slackBefore; n != 0 {
		t.Fatalf("the project's Slack channel received %d calls during the evaluation", n)
	}
	// The first model request held the fenced evidence pack, gathered from the scenario.
	first := fake.Requests()[0].Text()
	if !strings.Contains(first, "<<<EVIDENCE") || !strings.Contains(first, "Disk full on a database host") {
		t.Fatalf("the first request lacks the scenario's evidence pack:\n%s", first)
	}

	// The HTML report is one self-contained page that loads nothing.
	res := c.do("GET", "/api/evals/"+started["id"].(string)+"/report.html", nil)
	if res.Status != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("report.html: %d %s", res.Status, res.Header.Get("Content-Type"))
	}
	if !strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("report CSP: %q", res.Header.Get("Content-Security-Policy"))
	}
	for _, bad := range []string{"<script", "src=\"http", "href=\"http"} {
		if strings.Contains(string(res.Body), bad) {
			t.Fatalf("the report loads something (%s)", bad)
		}
	}
	if !strings.Contains(string(res.Body), "disk-full") {
		t.Fatalf("the report does not name its scenario")
	}
	list := c.must(200, "GET", "/api/evals", nil).JSON()
	if list["total"] != 1.0 {
		t.Fatalf("list: %v", list)
	}
}

// A scenario that does not fit the schema is a 422 at its index, naming
// the file, line and field; a viewer cannot start an evaluation; another
// org's evaluation is a 404.
func TestEvalAPIRefusesBadScenariosAndOtherTenants(t *testing.T) {
	fake := llmfake.New(t, llmfake.Always(llmfake.Text("nothing to see")))
	env := newEnv(t, withLLM(fake), openSignup)
	a := env.newTenant(t, "alpha")
	b := env.newTenant(t, "bravo")
	bad := "name: broken\ninput:\n  prompt: hi\nexpect:\n  root_cause:\n    match: [disk]\n  must_cal: [run_command]\n"
	res := a.owner.do("POST", "/api/evals", map[string]any{"scenarios": []map[string]any{{"name": "broken.yaml", "yaml": bad}}})
	if res.Status != 422 {
		t.Fatalf("bad scenario: %d %s", res.Status, res.Body)
	}
	detail := res.JSON()["detail"].([]any)[0].(map[string]any)
	if loc := detail["loc"].([]any); len(loc) != 4 || loc[1] != "scenarios" || loc[2] != 0.0 || loc[3] != "yaml" {
		t.Fatalf("loc: %v", loc)
	}
	if msg := detail["msg"].(string); !strings.Contains(msg, "broken.yaml:7") || !strings.Contains(msg, "must_cal") {
		t.Fatalf("msg: %q", msg)
	}
	ok := "name: ok\ninput:\n  prompt: hi\nexpect:\n  no_finding: true\n"
	a.byRole["viewer"].must(403, "POST", "/api/evals", map[string]any{"scenarios": []map[string]any{{"yaml": ok}}})
	id := a.owner.must(202, "POST", "/api/evals", map[string]any{"scenarios": []map[string]any{{"yaml": ok}}}).JSON()["id"].(string)
	waitEval(t, a.owner, id)
	for _, path := range []string{"/api/evals/" + id, "/api/evals/" + id + "/report.html"} {
		b.owner.must(404, "GET", path, nil)
	}
	if got := b.owner.must(200, "GET", "/api/evals", nil).JSON()["total"]; got != 0.0 {
		t.Fatalf("bravo sees %v of alpha's evaluations", got)
	}
}
