package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// investigationFakes are the loopback systems an investigation reads:
// Prometheus and Loki answering in their HTTP APIs' wire formats, and a
// Grafana that never answers.
type investigationFakes struct {
	prom, loki, grafana *httptest.Server
	promQueries         chan string
}

func newInvestigationFakes(t *testing.T) *investigationFakes {
	f := &investigationFakes{promQueries: make(chan string, 16)}
	f.prom = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/query_range" {
			http.NotFound(w, r)
			return
		}
		f.promQueries <- r.URL.Query().Get("query")
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"http_request_duration_p99","service":"api"},
			"values":[[1700000000,"0.21"],[1700000060,"2.73"]]}]}}`))
	}))
	f.loki = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/loki/api/v1/query_range" || r.URL.Query().Get("query") != `{service="api"}` {
			http.Error(w, "unexpected "+r.URL.String(), 400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"success","data":{"resultType":"streams","result":[{"stream":{"service":"api"},
			"values":[["1700000000000000000","ERROR pool exhausted: 5 of 5 connections busy (token s3cr3t-token)"]]}]}}`))
	}))
	f.grafana = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // hangs until the caller gives up
	}))
	t.Cleanup(func() { f.prom.Close(); f.loki.Close(); f.grafana.CloseClientConnections(); f.grafana.Close() })
	return f
}

// TestInvestigationEvidenceAndFinding drives an alert-triggered run with the
// scripted model: its first model request holds the evidence pack (the
// alert, the matching runbook, the similar past incident with its
// resolution, the change before the alert, the Prometheus series and the
// Loki lines), as sections in the documented order, fenced and masked, with
// the hanging Grafana named as failed; the model's finding (after one
// correction) is stored on the incident with its references checked; its
// next step becomes an approval that runs once; and the approved action
// appears in the change feed.
func TestInvestigationEvidenceAndFinding(t *testing.T) {
	t.Parallel()
	fakes := newInvestigationFakes(t)
	finding := `{"summary":"The shop v2.0 deploy cut the connection pool to 5; requests queue for a connection.",
		"hypotheses":[{"cause":"the v2.0 deploy set pool_size=5","confidence":"high","evidence":["ev1","call_runbook","ev99"]},
		{"cause":"database slowness","confidence":"low","evidence":[]}],
		"impact":"checkout p99 above 2s for all customers",
		"next_steps":[{"action":"roll back to v1.9","command":"echo rollback >> rollback.log","target":"server","needs_approval":true},
		{"action":"check the replica","command":"pg_isready","target":"db-9","needs_approval":false}]}`
	fake := llmfake.New(t,
		llmfake.Text("The old incident: nothing more to add."), // the past incident's own run
		llmfake.Text("# Postmortem\n\nThe pool was restored."), // its postmortem draft, on resolve
		llmfake.Reply("", llmfake.Call{ID: "call_runbook", Name: "search_knowledge", Arguments: `{"query":"connection pool"}`}),
		llmfake.Reply("", llmfake.Call{ID: "call_bad", Name: "report_finding", Arguments: `{"summary":"x","impact":"y","hypotheses":[{"cause":"c","confidence":"certain","evidence":[]}],"next_steps":[]}`}),
		llmfake.Reply("", llmfake.Call{ID: "call_finding", Name: "report_finding", Arguments: finding}),
		llmfake.Text("Rolled-back recommended: see the finding."),
	)
	env := newEnv(t, withLLM(fake), allowLocal, func(c *server.Config) { c.EvidenceSourceTimeout = 300 * time.Millisecond })
	e := &e2e{env: env, fake: fake, c: env.register("oncall@example.com")}
	withProject(t, env, e.c)
	e.work = env.Dir + "/work/" + e.c.Project
	c := e.c
	c.must(200, "PUT", "/api/secrets/SHOP_TOKEN", map[string]any{"value": "s3cr3t-token"})
	c.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": "api-latency.md",
		"content": "# HighLatency on api\n\nWhen HighLatency fires for service api, check the connection pool size first: a pool below 20 queues requests."})
	for kind, u := range map[string]string{"prometheus": fakes.prom.URL, "loki": fakes.loki.URL, "grafana": fakes.grafana.URL} {
		c.must(201, "POST", "/api/integrations", map[string]any{"kind": kind, "name": kind + "-main", "base_url": u})
	}

	// A past incident, resolved with its resolution.
	am := newHook(t, env, c, map[string]any{"provider": "alertmanager"})
	if r := am.post(t, amAlert("g-old", "fp-old", "firing"), bearer(am.secret)); r.Status != 202 {
		t.Fatalf("old alert: %d %s", r.Status, r.Body)
	}
	am.dispatch(t)
	t.Logf("%s old alert dispatched", time.Now().Format("15:04:05.000"))
	old := c.must(200, "GET", "/api/incidents", nil).JSON()["items"].([]any)[0].(map[string]any)["id"].(string)
	pollUntil(t, "the old incident's no-finding", func() map[string]any { return c.must(200, "GET", "/api/incidents/"+old, nil).JSON() },
		func(m map[string]any) bool { return m["latest_finding"] != nil })
	c.must(200, "POST", "/api/incidents/"+old+"/resolve", map[string]any{"summary": "HighLatency on api: rolled back shop v1.9 to v1.8, which restored the pool."})
	pollUntil(t, "the old incident's postmortem draft", func() map[string]any { return c.do("GET", "/api/postmortems/"+old, nil).JSON() },
		func(m map[string]any) bool { return m["status"] == "draft" || m["status"] == "failed" }) // 404 until the draft starts

	// The change before the new alert.
	c.must(201, "POST", "/api/changes", map[string]any{"title": "deploy shop v2.0 (pool_size 20 -> 5)", "service": "api", "environment": "production",
		"author": "dev@example.com", "occurred_at": time.Now().UTC().Add(-10 * time.Minute).Format(time.RFC3339)})

	before := len(fake.Requests())
	if r := am.post(t, amAlert("g-new", "fp-new", "firing"), bearer(am.secret)); r.Status != 202 {
		t.Fatalf("new alert: %d %s", r.Status, r.Body)
	}
	am.dispatch(t)
	var inc string
	for _, it := range c.must(200, "GET", "/api/incidents?status=triggered", nil).JSON()["items"].([]any) {
		inc = it.(map[string]any)["id"].(string)
	}
	t.Logf("%s new alert dispatched", time.Now().Format("15:04:05.000"))
	detail := pollUntil(t, "the new incident's finding", func() map[string]any { return c.must(200, "GET", "/api/incidents/"+inc, nil).JSON() },
		func(m map[string]any) bool { return m["latest_finding"] != nil })
	pollUntil(t, "the run's end", func() map[string]any {
		return c.must(200, "GET", "/api/sessions/detail/"+detail["latest_finding"].(map[string]any)["session_id"].(string), nil).JSON()
	}, func(m map[string]any) bool { return m["status"] != "running" && m["status"] != "pending" })
	t.Logf("%s run ended", time.Now().Format("15:04:05.000"))

	// The first model request of the run holds the pack.
	reqs := fake.Requests()
	if len(reqs) < before+4 {
		sd := c.must(200, "GET", "/api/sessions/detail/"+detail["latest_finding"].(map[string]any)["session_id"].(string), nil).Body
		for _, r := range reqs[before:] {
			t.Logf("request: %d messages; last %+v", len(r.Messages), r.Messages[len(r.Messages)-1])
		}
		t.Fatalf("the run made %d model requests (before %d): %s\n%v", len(reqs)-before, before, sd, detail["latest_finding"])
	}
	first := reqs[before]
	var user string
	for _, m := range first.Messages {
		if m.Role == "user" {
			user = m.Content
			break
		}
	}
	if !strings.Contains(user, "<<<EVIDENCE ") || !strings.Contains(user, "(untrusted data gathered by the platform") {
		t.Fatalf("the first request's user message is not fenced evidence:\n%s", user)
	}
	order := []string{"## The alert", "## Runbooks and facts that match", "check the connection pool size first",
		"## Similar past incidents and how they were resolved", "resolution: HighLatency on api: rolled back shop v1.9",
		"## Changes before the alert", "deploy shop v2.0 (pool_size 20 -> 5)",
		"## Prometheus series", "http_request_duration_p99", "2.73", "## Loki log lines", "ERROR pool exhausted",
		"## Sources that gave nothing", "- grafana: timed out after 300ms"}
	at := 0
	for _, w := range order {
		i := strings.Index(user[at:], w)
		if i < 0 {
			t.Fatalf("the pack lacks %q after offset %d (sections out of order?):\n%s", w, at, user)
		}
		at += i + len(w)
	}
	if strings.Contains(user, "s3cr3t-token") {
		t.Fatalf("the pack carries a secret unmasked:\n%s", user)
	}
	if !strings.Contains(first.System, "report_finding") || !strings.Contains(first.System, "Check what changed") {
		t.Fatalf("system prompt lacks the method or the reporting tool:\n%s", first.System)
	}
	if q := <-fakes.promQueries; q == "" {
		t.Fatal("prometheus was queried with no expression")
	}
	// The model was told to correct the bad finding.
	if res := reqs[before+2].ToolResults(); len(res) == 0 || !strings.Contains(res[len(res)-1].Content, `"certain" is not one of low, medium, high`) {
		t.Fatalf("the bad finding's tool error: %+v", res)
	}

	// The finding on the incident, its references checked.
	lf := detail["latest_finding"].(map[string]any)
	if lf["status"] != "reported" || !strings.HasPrefix(lf["summary"].(string), "The shop v2.0 deploy") || lf["prompt_version"] == "" {
		t.Fatalf("latest finding: %v", lf)
	}
	ev := lf["hypotheses"].([]any)[0].(map[string]any)["evidence"].([]any)
	if len(ev) != 2 || ev[0].(map[string]any)["kind"] != "evidence" || ev[1].(map[string]any)["ref"] != "call_runbook" ||
		ev[1].(map[string]any)["kind"] != "tool_call" || ev[1].(map[string]any)["resolved"] != true {
		t.Fatalf("evidence refs: %v", ev)
	}
	if d := lf["dropped_refs"].([]any); len(d) != 1 || d[0] != "ev99" {
		t.Fatalf("dropped refs: %v", d)
	}
	if u := lf["unresolved_targets"].([]any); len(u) != 1 || u[0] != "db-9" {
		t.Fatalf("unresolved targets: %v", u)
	}
	if res := reqs[before+3].ToolResults(); len(res) == 0 || !strings.Contains(res[len(res)-1].Content, "dropped: ev99") {
		t.Fatalf("the model was not told what was dropped: %+v", res)
	}
	page := c.must(200, "GET", "/api/incidents/"+inc+"/findings", nil).JSON()
	if page["total"].(float64) != 1 {
		t.Fatalf("findings: %v", page)
	}
	oldF := c.must(200, "GET", "/api/incidents/"+old+"/findings", nil).JSON()["items"].([]any)[0].(map[string]any)
	if oldF["status"] != "no_finding" || oldF["final_text"] != "The old incident: nothing more to add." {
		t.Fatalf("the old run's no-finding: %v", oldF)
	}
	pack := c.must(200, "GET", "/api/incidents/"+inc+"/evidence", nil).JSON()
	if f := pack["failed"].([]any); len(f) != 1 || f[0].(map[string]any)["source"] != "grafana" {
		t.Fatalf("pack failures: %v", pack["failed"])
	}
	sid := lf["session_id"].(string)
	raw := e.rawEvents(t, sid)
	if !strings.Contains(raw, "event: evidence") || !strings.Contains(raw, "event: finding") {
		t.Fatalf("session events lack evidence or finding:\n%.2000s", raw)
	}
	if sd := c.must(200, "GET", "/api/sessions/detail/"+sid, nil).JSON(); sd["prompt_version"] != lf["prompt_version"] || !strings.Contains(sd["prompt_version"].(string), "+method/1") {
		t.Fatalf("session prompt version %v, finding's %v", sd["prompt_version"], lf["prompt_version"])
	}

	// A next step becomes an approval in one action, and runs once when approved.
	fid := lf["id"].(string)
	ap := c.must(201, "POST", "/api/incidents/"+inc+"/findings/"+fid+"/next-steps/0/request-approval", nil).JSON()
	c.must(409, "POST", "/api/incidents/"+inc+"/findings/"+fid+"/next-steps/0/request-approval", nil)
	c.must(404, "POST", "/api/incidents/"+inc+"/findings/"+fid+"/next-steps/7/request-approval", nil)
	c.must(200, "POST", "/api/approvals/"+ap["id"].(string)+"/approve", map[string]any{"comment": "go"})
	pollUntil(t, "the next step's result", func() map[string]any {
		return c.must(200, "GET", "/api/incidents/"+inc+"/findings", nil).JSON()["items"].([]any)[0].(map[string]any)
	}, func(m map[string]any) bool { return m["next_steps"].([]any)[0].(map[string]any)["result"] != nil })
	if n := e.runs("rollback.log"); n != 1 {
		t.Fatalf("the approved next step ran %d times", n)
	}
	var changes struct {
		Items []map[string]any `json:"items"`
	}
	c.must(200, "GET", "/api/changes?source=agent", nil).decode(t, &changes)
	if len(changes.Items) != 1 || changes.Items[0]["author"] != "oncall@example.com" || !strings.Contains(changes.Items[0]["title"].(string), "echo rollback >> rollback.log") ||
		changes.Items[0]["labels"].(map[string]any)["host"] != "server" {
		b, _ := json.Marshal(changes.Items)
		t.Fatalf("the approved action in the change feed: %s", b)
	}
	// And on the incident's timeline, which runs until the incident is resolved.
	var onTimeline bool
	for _, e := range c.must(200, "GET", "/api/incidents/"+inc, nil).JSON()["timeline"].([]any) {
		m := e.(map[string]any)
		onTimeline = onTimeline || m["kind"] == "change" && strings.Contains(m["text"].(string), "echo rollback >> rollback.log")
	}
	if !onTimeline {
		t.Fatal("the approved action is not on the incident's timeline")
	}
}

// An investigation's finding is posted as one message to the incident's
// chat (the channel its task posts to), with its hypotheses and next steps.
func TestFindingPostedToTheIncidentsSlackChannel(t *testing.T) {
	ce := newChannelEnv(t,
		llmfake.Reply("", llmfake.Call{ID: "call_f", Name: "report_finding", Arguments: `{"summary":"Disk full on web-1 after the log rotation change.",
			"hypotheses":[{"cause":"logrotate disabled by the config change","confidence":"medium","evidence":["ev1"]}],
			"impact":"web-1 rejects writes","next_steps":[{"action":"re-enable logrotate","command":"systemctl start logrotate","target":"server","needs_approval":true}]}`}),
		llmfake.Text("Reported."),
	)
	chID := ce.slackChannel(t, nil)
	f := newHook(t, ce.env, ce.owner, map[string]any{"provider": "alertmanager"})
	ce.owner.must(200, "PUT", "/api/tasks/"+f.task+"/channel", map[string]any{"channel_id": chID, "conversation": "C0INCIDENT"})
	if r := f.post(t, amAlert("g-disk", "fp-disk", "firing"), bearer(f.secret)); r.Status != 202 {
		t.Fatalf("alert: %d %s", r.Status, r.Body)
	}
	msg := ce.slack.waitFor("the finding", func(c chatCall) bool {
		return c.Method == "chat.postMessage" && c.Form.Get("channel") == "C0INCIDENT" && strings.Contains(c.text(), "Finding on incident")
	})
	if !containsAll(msg.text(), "Disk full on web-1 after the log rotation change.", "[medium] logrotate disabled by the config change (evidence: ev1)",
		"Impact: web-1 rejects writes", "systemctl start logrotate", "(needs approval)") {
		t.Fatalf("finding message: %s", msg.text())
	}
}
