package server_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// dispatchItems decodes an event's dispatch record.
func dispatchItems(t *testing.T, ev map[string]any) []map[string]any {
	t.Helper()
	var items []map[string]any
	switch d := ev["dispatch"].(type) {
	case []any:
		b, _ := json.Marshal(d)
		_ = json.Unmarshal(b, &items)
	case string:
		_ = json.Unmarshal([]byte(d), &items)
	}
	return items
}

func TestMaintenanceWindowHoldsBackMatchingAlerts(t *testing.T) {
	env := newEnv(t, openSignup)
	env.UseClock()
	human := env.register("owner@example.com")
	withProject(t, env, human)
	owner, _ := env.apiKey(t, human, map[string]any{"name": "ops", "scopes": []string{"*"}})
	owner.Project = human.Project
	f := newHook(t, env, owner, map[string]any{"provider": "alertmanager"})

	now := time.Now().UTC()
	wantValidation(t, owner.do("POST", "/api/maintenance-windows", map[string]any{"name": "x", "starts_at": now, "ends_at": now.Add(-time.Hour)}), "body", "ends_at")
	wantValidation(t, owner.do("POST", "/api/maintenance-windows", map[string]any{"name": "x", "schedule": "0 2 * * 6", "duration_seconds": 10}), "body", "duration_seconds")
	wantValidation(t, owner.do("POST", "/api/maintenance-windows", map[string]any{"name": "x", "starts_at": now, "ends_at": now.Add(time.Hour), "match_sources": []string{"nagios"}}), "body", "match_sources")

	win := owner.must(201, "POST", "/api/maintenance-windows", map[string]any{"name": "db upgrade", "starts_at": now.Add(-time.Minute),
		"ends_at": now.Add(time.Hour), "match_sources": []string{"alertmanager"}, "match_labels": map[string]string{"service": "ap*"}}).JSON()
	if win["active"] != true || win["mode"] != "suppress" {
		t.Fatalf("window: %v", win)
	}
	// A window for another service does not hold back this alert's twin below.
	owner.must(201, "POST", "/api/maintenance-windows", map[string]any{"name": "other", "schedule": "0 * * * *", "timezone": "Europe/Berlin",
		"duration_seconds": 3600, "match_labels": map[string]string{"service": "billing"}})

	if r := f.post(t, amAlert("g-in", "fp-in", "firing"), bearer(f.secret)); r.Status != 202 {
		t.Fatalf("alert: %d %s", r.Status, r.Body)
	}
	f.dispatch(t)
	evs := f.events(t, "")
	if len(evs) != 1 || evs[0]["status"] != "suppressed" {
		t.Fatalf("inside the window: %v", evs)
	}
	ev := owner.must(200, "GET", "/api/tasks/"+f.task+"/webhook/events/"+evs[0]["id"].(string), nil).JSON()
	items := dispatchItems(t, ev)
	if len(items) != 1 || items[0]["kind"] != "window" || items[0]["id"] != win["id"] || !strings.Contains(items[0]["reason"].(string), "db upgrade") {
		t.Fatalf("dispatch record of a suppressed event: %v", ev["dispatch"])
	}
	if got := owner.must(200, "GET", "/api/tasks/"+f.task, nil).JSON(); got["last_session_id"] != nil {
		t.Fatalf("a run started inside the window: %v", got)
	}
	if got := f.events(t, "&status=suppressed"); len(got) != 1 {
		t.Fatalf("status filter: %v", got)
	}

	// After the window: dispatched.
	env.Advance(2 * time.Hour)
	f.post(t, amAlert("g-out", "fp-out", "firing"), bearer(f.secret))
	f.dispatch(t)
	evs = f.events(t, "&status=dispatched")
	if len(evs) != 1 {
		t.Fatalf("outside the window: %v", f.events(t, ""))
	}
	ev = owner.must(200, "GET", "/api/tasks/"+f.task+"/webhook/events/"+evs[0]["id"].(string), nil).JSON()
	if run := itemOf(dispatchItems(t, ev), "run"); run == nil {
		t.Fatalf("dispatch record outside the window: %v", ev["dispatch"])
	}
	if got := owner.must(200, "GET", "/api/maintenance-windows/"+win["id"].(string), nil).JSON(); got["active"] != false {
		t.Fatalf("window after its end: %v", got)
	}
}

func TestMaintenanceWindowObserveModeMarksRuns(t *testing.T) {
	env := newEnv(t, openSignup)
	owner := env.register("owner@example.com")
	f := newHook(t, env, owner, map[string]any{"provider": "alertmanager"})
	now := time.Now().UTC()
	win := owner.must(201, "POST", "/api/maintenance-windows", map[string]any{"name": "freeze", "mode": "observe",
		"starts_at": now.Add(-time.Minute), "ends_at": now.Add(time.Hour)}).JSON()
	f.post(t, amAlert("g", "fp", "firing"), bearer(f.secret))
	f.dispatch(t)
	evs := f.events(t, "")
	if len(evs) != 1 || evs[0]["status"] != "dispatched" {
		t.Fatalf("observe mode: %v", evs)
	}
	ev := owner.must(200, "GET", "/api/tasks/"+f.task+"/webhook/events/"+evs[0]["id"].(string), nil).JSON()
	items := dispatchItems(t, ev)
	run, w := itemOf(items, "run"), itemOf(items, "window")
	if run == nil || !strings.Contains(run["reason"].(string), "observe-only") || w == nil || w["id"] != win["id"] || w["status"] != "observe" {
		t.Fatalf("dispatch record in observe mode: %v", ev["dispatch"])
	}
}

func itemOf(items []map[string]any, kind string) map[string]any {
	for _, it := range items {
		if it["kind"] == kind {
			return it
		}
	}
	return nil
}

// A run started inside an observe-mode window may read but not change:
// its change-capable call is refused outright (no approval is opened).
func TestMaintenanceWindowObserveRunCannotChange(t *testing.T) {
	e := newE2E(t,
		llmfake.ToolCall("run_command", `{"command":"`+echoHello+`","target":"server"}`),
		llmfake.ToolCall("http_request", `{"method":"GET","url":"https://example.invalid/health"}`),
		llmfake.Text("Observed only."),
	)
	f := newHook(t, e.env, e.c, map[string]any{"provider": "alertmanager"})
	now := time.Now().UTC()
	e.c.must(201, "POST", "/api/maintenance-windows", map[string]any{"name": "freeze", "mode": "observe",
		"starts_at": now.Add(-time.Minute), "ends_at": now.Add(time.Hour)})
	f.post(t, amAlert("g", "fp", "firing"), bearer(f.secret))
	f.dispatch(t)
	tk := e.waitTask(t, f.task, func(tk map[string]any) bool { return tk["last_status"] == "completed" || tk["last_status"] == "failed" })
	raw := e.rawEvents(t, tk["last_session_id"].(string))
	if !strings.Contains(raw, "observe mode") || strings.Contains(raw, "approval.required") || e.runs("hello.log") != 0 {
		t.Fatalf("the observe-only run changed something or asked to:\n%s", raw)
	}
	if n := strings.Count(raw, `"blocked":true`); n != 1 {
		t.Fatalf("want exactly the change refused (the read ran), got %d refusals:\n%s", n, raw)
	}
	if got := e.c.must(200, "GET", "/api/approvals?status=pending", nil).JSON(); got["total"] != float64(0) {
		t.Fatalf("approvals: %v", got)
	}
}
