package server_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/server/webhook"
	"github.com/opsagent/opsagent/store"
)

// genericAlert is a generic-provider delivery with a title and a severity.
func genericAlert(title, severity string) []byte {
	return []byte(`{"title":"` + title + `","severity":"` + severity + `"}`)
}

// runsOf counts the recorded runs of a task.
func runsOf(t *testing.T, env *testEnv, org, task string) int {
	t.Helper()
	runs, err := env.DB.FindTaskRuns(t.Context(), org, task, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return len(runs)
}

// event reads one stored event of the fixture's webhook.
func (f *hookFixture) event(t *testing.T, id string) map[string]any {
	t.Helper()
	return f.owner.must(200, "GET", "/api/tasks/"+f.task+"/webhook/events/"+id, nil).JSON()
}

// deliver posts a bearer-signed delivery, waits for its dispatch and
// returns the stored event.
func (f *hookFixture) deliver(t *testing.T, body []byte) map[string]any {
	t.Helper()
	r := f.post(t, body, bearer(f.secret))
	if r.Status != 202 {
		t.Fatalf("delivery: %d %s", r.Status, r.Body)
	}
	f.dispatch(t)
	return f.event(t, r.JSON()["event_id"].(string))
}

// Conditions that do not compile or are too costly are refused on save
// (create and update) at body.condition; a target outside the project,
// whether another project of the org or another tenant's, at
// body.target_task_id.
func TestWebhookRuleValidation(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	owner := env.register("owner@example.com")
	f := newHook(t, env, owner, map[string]any{"provider": "generic", "scheme": "bearer"})
	rules := "/api/tasks/" + f.task + "/webhook/rules"
	for name, cond := range map[string]string{
		"syntax":           `alert.severity ==`,
		"unknown variable": `nosuch.field == 1`,
		"not boolean":      `alert.title`,
		"range":            `any(1..1000000, # > 0)`,
		"nested predicate": `any(alerts, any(alerts, .title == "x"))`,
		"repeat":           `repeat("a", 1000000) != ""`,
		"let":              `let x = 1; x == 1`,
		"too long":         string(bytes.Repeat([]byte("1 == 1 && "), 120)) + "true",
	} {
		t.Run(name, func(t *testing.T) {
			wantValidation(t, owner.do("POST", rules, map[string]any{"name": "r", "condition": cond}), "body", "condition")
		})
	}
	ok := owner.must(201, "POST", rules, map[string]any{"name": "crit", "condition": `alert.severity == "critical"`}).JSON()
	if ok["target_task_id"] != f.task || ok["priority"].(float64) != 100 || ok["enabled"] != true {
		t.Fatalf("defaults: %v", ok)
	}
	wantValidation(t, owner.do("PATCH", rules+"/"+ok["id"].(string), map[string]any{"condition": `alert.severity ==`}), "body", "condition")
	wantValidation(t, owner.do("PATCH", rules+"/"+ok["id"].(string), map[string]any{"condition": `any(1..9, true)`}), "body", "condition")

	// Another project of the same org.
	other := owner.must(201, "POST", "/api/projects", map[string]any{"name": "staging"}).JSON()["id"].(string)
	mine := owner.Project
	owner.Project = other
	otherTask := createTask(t, owner, map[string]any{"name": "elsewhere", "prompt": "p"})["id"].(string)
	owner.Project = mine
	wantValidation(t, owner.do("POST", rules, map[string]any{"name": "x", "target_task_id": otherTask}), "body", "target_task_id")
	// Another tenant's task, and a random id: the same refusal.
	bravo := env.register("bravo@example.com")
	withProject(t, env, bravo)
	bravoTask := createTask(t, bravo, map[string]any{"name": "theirs", "prompt": "p"})["id"].(string)
	foreign := owner.do("POST", rules, map[string]any{"name": "x", "target_task_id": bravoTask})
	random := owner.do("POST", rules, map[string]any{"name": "x", "target_task_id": store.NewID()})
	wantValidation(t, foreign, "body", "target_task_id")
	if string(foreign.Body) != string(random.Body) {
		t.Fatalf("a foreign task reads differently from a random id: %s vs %s", foreign.Body, random.Body)
	}
	wantValidation(t, owner.do("PATCH", rules+"/"+ok["id"].(string), map[string]any{"target_task_id": bravoTask}), "body", "target_task_id")
	wantValidation(t, owner.do("POST", rules, map[string]any{"name": "x", "target_task_id": "nope"}), "body", "target_task_id")
	// Nothing invalid was saved.
	if got := owner.must(200, "GET", rules, nil).List(); len(got) != 1 {
		t.Fatalf("rules after refusals: %v", got)
	}
}

// First match runs only the first matching rule by priority; fan-out runs
// every matching rule. A rule may target another task of the project.
func TestWebhookRoutingFirstMatchAndFanOut(t *testing.T) {
	t.Parallel()
	// A model that answers: with none, the first run's failure would hold the
	// org's later webhook runs (webhook_run_hold.go) and this counts runs.
	env := newEnv(t, withLLM(llmfake.New(t, llmfake.Always(llmfake.Text("looked")))))
	owner := env.register("owner@example.com")
	f := newHook(t, env, owner, map[string]any{"provider": "generic", "scheme": "bearer", "dedupe_window_seconds": 0})
	org := orgOf(t, owner)
	pager := createTask(t, owner, map[string]any{"name": "page the db team", "prompt": "look at the database", "overlap_policy": "queue"})["id"].(string)
	rules := "/api/tasks/" + f.task + "/webhook/rules"
	crit := owner.must(201, "POST", rules, map[string]any{"name": "critical to db team", "priority": 10,
		"condition": `alert.severity == "critical"`, "target_task_id": pager}).JSON()["id"].(string)
	all := owner.must(201, "POST", rules, map[string]any{"name": "everything", "priority": 20}).JSON()["id"].(string)
	if l := owner.must(200, "GET", rules, nil).List(); len(l) != 2 || l[0]["id"] != crit {
		t.Fatalf("rules order: %v", l)
	}

	ev := f.deliver(t, genericAlert("db down", "critical"))
	d := ev["dispatch"].([]any)
	if len(d) != 1 || d[0].(map[string]any)["rule_id"] != crit || d[0].(map[string]any)["task_id"] != pager {
		t.Fatalf("first match dispatched %v", d)
	}
	if runsOf(t, env, org, pager) != 1 || runsOf(t, env, org, f.task) != 0 {
		t.Fatal("first match: want one run of the target task only")
	}
	ev = f.deliver(t, genericAlert("disk 80%", "warning"))
	if d := ev["dispatch"].([]any); len(d) != 1 || d[0].(map[string]any)["rule_id"] != all {
		t.Fatalf("warning dispatched %v", d)
	}

	owner.must(200, "PUT", "/api/tasks/"+f.task+"/webhook", map[string]any{"routing_mode": "fan_out"})
	ev = f.deliver(t, genericAlert("db down again", "critical"))
	if d := ev["dispatch"].([]any); len(d) != 2 {
		t.Fatalf("fan-out dispatched %v", d)
	}
	if runsOf(t, env, org, pager) != 2 || runsOf(t, env, org, f.task) != 2 {
		t.Fatalf("fan-out runs: pager %d, own %d", runsOf(t, env, org, pager), runsOf(t, env, org, f.task))
	}
	// No rule matches: stored as no_match, nothing runs.
	owner.must(204, "DELETE", rules+"/"+all, nil)
	ev = f.deliver(t, genericAlert("fyi", "info"))
	if ev["status"] != store.EventNoMatch || len(ev["dispatch"].([]any)) != 0 {
		t.Fatalf("no match: %v", ev)
	}
}

// A requires_approval rule opens an approval instead of running; approving
// starts exactly one run of the target with the alert, deciding twice is
// 409, deny starts nothing, an expired approval is 409, and another
// tenant's approval reads as 404.
func TestWebhookApprovals(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	env.UseClock()
	owner := env.register("owner@example.com")
	f := newHook(t, env, owner, map[string]any{"provider": "generic", "scheme": "bearer", "dedupe_window_seconds": 0, "approval_ttl_seconds": 600})
	org := orgOf(t, owner)
	target := createTask(t, owner, map[string]any{"name": "restart api", "prompt": "restart the api pods", "overlap_policy": "queue"})["id"].(string)
	owner.must(201, "POST", "/api/tasks/"+f.task+"/webhook/rules", map[string]any{"name": "needs a human",
		"target_task_id": target, "requires_approval": true})

	pending := func(ev map[string]any) string {
		t.Helper()
		d := ev["dispatch"].([]any)
		if ev["status"] != store.EventApprovalPending || len(d) != 1 || d[0].(map[string]any)["kind"] != "approval" {
			t.Fatalf("want an approval and no run: %v", ev)
		}
		return d[0].(map[string]any)["id"].(string)
	}
	ev := f.deliver(t, genericAlert("api 500s", "critical"))
	id := pending(ev)
	if runsOf(t, env, org, target) != 0 {
		t.Fatal("a requires_approval rule ran before approval")
	}
	a := owner.must(200, "GET", "/api/approvals/"+id, nil).JSON()
	if a["status"] != "pending" || a["kind"] != "webhook_event" || a["event_id"] != ev["id"] {
		t.Fatalf("approval: %v", a)
	}
	if l := owner.must(200, "GET", "/api/approvals?status=pending", nil).JSON()["items"].([]any); len(l) != 1 {
		t.Fatalf("pending list: %v", l)
	}
	// Another tenant cannot see or decide it: 404, like a random id.
	bravo := env.register("bravo@example.com")
	withProject(t, env, bravo)
	for _, path := range []string{"/api/approvals/" + id, "/api/approvals/" + store.NewID()} {
		bravo.must(404, "GET", path, nil)
		bravo.must(404, "POST", path+"/approve", map[string]any{})
		bravo.must(404, "POST", path+"/deny", map[string]any{})
	}

	done := owner.must(200, "POST", "/api/approvals/"+id+"/approve", map[string]any{"comment": "go"}).JSON()
	if done["status"] != "approved" || done["result"].(map[string]any)["session_id"] == nil {
		t.Fatalf("approved: %v", done)
	}
	owner.must(409, "POST", "/api/approvals/"+id+"/approve", map[string]any{})
	owner.must(409, "POST", "/api/approvals/"+id+"/deny", map[string]any{})
	runs, _ := env.DB.FindTaskRuns(t.Context(), org, target, 10)
	if len(runs) != 1 || runs[0].ID != done["result"].(map[string]any)["session_id"] || runs[0].TriggerSource != "webhook" {
		t.Fatalf("want exactly one run of the target after approval: %v", runs)
	}
	if !bytes.Contains([]byte(runs[0].FirstPrompt), []byte("api 500s")) {
		t.Fatalf("the approved run does not carry the alert: %q", runs[0].FirstPrompt)
	}
	if ev = f.event(t, ev["id"].(string)); ev["status"] != store.EventDispatched || len(ev["dispatch"].([]any)) != 2 {
		t.Fatalf("event after approval: %v", ev)
	}

	// Deny: nothing runs, and the decision is final.
	id = pending(f.deliver(t, genericAlert("api slow", "warning")))
	denied := owner.must(200, "POST", "/api/approvals/"+id+"/deny", map[string]any{"comment": "not now"}).JSON()
	if denied["status"] != "denied" || denied["comment"] != "not now" {
		t.Fatalf("denied: %v", denied)
	}
	owner.must(409, "POST", "/api/approvals/"+id+"/approve", map[string]any{})
	if runsOf(t, env, org, target) != 1 {
		t.Fatal("a denied approval started a run")
	}

	// Expiry: past its TTL an approval reads as expired and cannot be
	// decided, before and after the expiry job marks it.
	id = pending(f.deliver(t, genericAlert("api flapping", "warning")))
	late := pending(f.deliver(t, genericAlert("api flapping 2", "warning")))
	env.Advance(601 * time.Second)
	if a := owner.must(200, "GET", "/api/approvals/"+id, nil).JSON(); a["status"] != "expired" {
		t.Fatalf("past its ttl: %v", a)
	}
	owner.must(409, "POST", "/api/approvals/"+id+"/approve", map[string]any{})
	if n, err := env.DB.ExpireApprovals(t.Context()); err != nil || n != 2 {
		t.Fatalf("expiry job: %d %v", n, err)
	}
	owner.must(409, "POST", "/api/approvals/"+late+"/approve", map[string]any{})
	owner.must(409, "POST", "/api/approvals/"+late+"/deny", map[string]any{})
	if l := owner.must(200, "GET", "/api/approvals?status=expired", nil).JSON()["items"].([]any); len(l) != 2 {
		t.Fatalf("expired list: %v", l)
	}
	if runsOf(t, env, org, target) != 1 {
		t.Fatal("an expired approval started a run")
	}
}

// Replay takes 1 to 50 events: 51 is refused at body.event_ids.
func TestWebhookReplayLimit(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	owner := env.register("owner@example.com")
	f := newHook(t, env, owner, map[string]any{"provider": "generic", "scheme": "bearer"})
	ids := make([]string, 51)
	for i := range ids {
		ids[i] = store.NewID()
	}
	path := "/api/tasks/" + f.task + "/webhook/events/replay"
	wantValidation(t, owner.do("POST", path, map[string]any{"event_ids": ids}), "body", "event_ids")
	wantValidation(t, owner.do("POST", path, map[string]any{"event_ids": []string{}}), "body", "event_ids")
	ev := f.deliver(t, genericAlert("replay me", "critical"))
	r := owner.must(202, "POST", path, map[string]any{"event_ids": append(ids[:49], ev["id"].(string))}).JSON()
	if items := r["items"].([]any); len(items) != 50 {
		t.Fatalf("replay of 50: %v", r)
	}
}

// PagerDuty's incident.triggered, .acknowledged and .resolved move one
// incident through its lifecycle; only the trigger starts a run.
func TestWebhookPagerDutyIncidentLifecycle(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	owner := env.register("owner@example.com")
	f := newHook(t, env, owner, map[string]any{"provider": "pagerduty"})
	org := orgOf(t, owner)
	sample := webhook.Sample(webhook.ProviderPagerDuty)
	send := func(eventType, status string) map[string]any {
		t.Helper()
		body := bytes.Replace(sample, []byte(`"incident.triggered"`), []byte(`"`+eventType+`"`), 1)
		body = bytes.Replace(body, []byte(`"status": "triggered"`), []byte(`"status": "`+status+`"`), 1)
		// Each PagerDuty event has its own id (the delivery's idempotency key).
		body = bytes.Replace(body, []byte(`"01DEN7JDHKR3Y5TBDP5PPQXCGZ"`), []byte(`"evt-`+eventType+`"`), 1)
		h := webhook.SampleHeaders(webhook.ProviderPagerDuty)
		h.Set("X-PagerDuty-Signature", "v1="+hmacSHA256Hex([]byte(f.secret), body))
		r := f.post(t, body, h)
		if r.Status != 202 {
			t.Fatalf("%s: %d %s", eventType, r.Status, r.Body)
		}
		f.dispatch(t)
		var page struct {
			Items []map[string]any `json:"items"`
		}
		owner.must(200, "GET", "/api/incidents", nil).decode(t, &page)
		if len(page.Items) != 1 {
			t.Fatalf("after %s: want one incident, got %v", eventType, page.Items)
		}
		return page.Items[0]
	}
	inc := send("incident.triggered", "triggered")
	if inc["status"] != "triggered" || inc["provider"] != "pagerduty" || inc["session_id"] == nil {
		t.Fatalf("triggered: %v", inc)
	}
	if inc = send("incident.acknowledged", "acknowledged"); inc["status"] != "acknowledged" {
		t.Fatalf("acknowledged: %v", inc)
	}
	if inc = send("incident.resolved", "resolved"); inc["status"] != "resolved" || inc["resolved_at"] == nil || inc["event_count"].(float64) != 3 {
		t.Fatalf("resolved: %v", inc)
	}
	if n := runsOf(t, env, org, f.task); n != 1 {
		t.Fatalf("want one investigation for the incident, got %d runs", n)
	}
	// Resolved by the provider, it is filed in the incidents collection too
	// (by the dispatcher, just after the commit that resolved it).
	// The postmortem draft of the incident lands in the same collection and
	// may rank first: the incident's own document must be among the hits.
	var found struct {
		Items []map[string]any `json:"items"`
	}
	filed := false
	for deadline := time.Now().Add(30 * time.Second); !filed && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		owner.must(200, "GET", "/api/knowledge/search?q=checkout+error+rate&collection=incidents", nil).decode(t, &found)
		for _, it := range found.Items {
			filed = filed || it["name"] == inc["id"].(string)+".md"
		}
	}
	if !filed {
		t.Fatalf("provider-resolved incident not found by knowledge search: %v", found.Items)
	}
	detail := owner.must(200, "GET", "/api/incidents/"+inc["id"].(string), nil).JSON()
	var statuses []string
	for _, e := range detail["timeline"].([]any) {
		if e := e.(map[string]any); e["kind"] == "status" {
			statuses = append(statuses, e["text"].(string))
		}
	}
	if len(statuses) != 2 || statuses[0] != "acknowledged" || statuses[1] != "resolved" {
		t.Fatalf("status timeline: %v", statuses)
	}
}
