package server_test

import (
	"strings"
	"testing"
)

// With no model configured, the first alert's run fails saying so, and the
// org's webhook runs are then held: the next alerts are stored and open
// their incidents, their run is skipped with the reason (no failed session
// per alert), and setting the org's LLM key releases the hold at once.
func TestWebhookRunsHeldWhileNoModelIsConfigured(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup) // no LLM
	owner := env.register("owner@example.com")
	withProject(t, env, owner)
	task := createTask(t, owner, map[string]any{"name": "on alert", "prompt": "investigate", "overlap_policy": "skip"})["id"].(string)
	h := owner.must(200, "PUT", "/api/tasks/"+task+"/webhook", map[string]any{"provider": "alertmanager", "rate_limit_per_minute": 100000}).JSON()
	f := &hookFixture{env: env, owner: owner, task: task, secret: h["secret"].(string), hook: h}
	runOf := func(e map[string]any) map[string]any {
		for _, d := range e["dispatch"].([]any) {
			if it := d.(map[string]any); it["kind"] == "run" {
				return it
			}
		}
		t.Fatalf("event has no run item: %v", e)
		return nil
	}

	first := f.deliver(t, amAlert("group-1", "fp-1", "firing"))
	sid, _ := runOf(first)["id"].(string)
	if first["status"] != "dispatched" || sid == "" {
		t.Fatalf("first alert: %v", first)
	}
	s := waitSession(t, owner, sid, func(d map[string]any) bool { return d["status"] == "failed" })
	if r, _ := s["reason"].(string); !strings.Contains(r, "no LLM configured") {
		t.Fatalf("first run: %v", s)
	}

	// Distinct alerts while held: each skipped with the reason, no new session.
	want := "no LLM configured (run " + sid + " failed for it)"
	var incident string
	for _, g := range []string{"group-2", "group-3"} {
		e := f.deliver(t, amAlert(g, "fp-"+g, "firing"))
		it := runOf(e)
		if e["status"] != "skipped" || it["status"] != "skipped" || !strings.HasPrefix(it["reason"].(string), want) {
			t.Fatalf("alert %s while held: %v", g, e)
		}
		for _, d := range e["dispatch"].([]any) {
			if it := d.(map[string]any); it["kind"] == "incident" {
				incident = it["id"].(string)
			}
		}
	}
	if runs, err := env.DB.FindTaskRuns(t.Context(), orgOf(t, owner), task, 100); err != nil || len(runs) != 1 {
		t.Fatalf("sessions of the task: %d (%v), want only the failed one", len(runs), err)
	}
	inc := owner.must(200, "GET", "/api/incidents/"+incident, nil).JSON()
	found := false
	for _, e := range inc["timeline"].([]any) {
		if it := e.(map[string]any); it["kind"] == "skipped" && strings.Contains(it["text"].(string), want) {
			found = true
		}
	}
	if !found {
		t.Fatalf("the held alert's incident does not say why its run was skipped: %v", inc["timeline"])
	}

	// The org's own key releases the hold: the next alert starts a run.
	owner.must(200, "PUT", "/api/organizations/"+orgOf(t, owner)+"/llm-key",
		map[string]any{"provider": "openai", "api_key": "sk-hold-test", "base_url": "http://127.0.0.1:1/v1"})
	after := f.deliver(t, amAlert("group-4", "fp-4", "firing"))
	if it := runOf(after); after["status"] != "dispatched" || it["id"] == nil || it["id"] == "" {
		t.Fatalf("alert after the key was set: %v", after)
	}
}
