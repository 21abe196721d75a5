package server_test

import "testing"

// A routing condition tried on a stored Alertmanager event: it sees the
// parsed alert and the payload as the dispatcher does; a bad condition is
// 422 with the compiler's message; nothing is dispatched by trying.
func TestWebhookMatchTriesAConditionOnAnEvent(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := env.register("op@example.com")
	f := newHook(t, env, c, map[string]any{"provider": "alertmanager"})
	if r := f.post(t, amAlert("g1", "fp1", "firing"), bearer(f.secret)); r.Status != 202 {
		t.Fatalf("delivery: %d %s", r.Status, r.Body)
	}
	f.dispatch(t)
	evs := f.events(t, "")
	if len(evs) != 1 {
		t.Fatalf("events: %v", evs)
	}
	path := "/api/tasks/" + f.task + "/webhook/events/" + evs[0]["id"].(string) + "/match"
	for cond, want := range map[string]bool{
		`alert.labels.severity == "critical" && provider == "alertmanager"`: true,
		`payload.commonLabels.service == "db"`:                              false,
		`event startsWith "alertmanager."`:                                  true,
	} {
		out := c.must(200, "POST", path, map[string]any{"condition": cond}).JSON()
		if out["matched"] != want || out["provider"] != "alertmanager" {
			t.Errorf("%s: %v, want matched=%v", cond, out, want)
		}
	}
	wantValidation(t, c.do("POST", path, map[string]any{"condition": "alert.severity =="}), "body", "condition")
	c.must(404, "POST", "/api/tasks/"+f.task+"/webhook/events/01a20aae-8998-74d7-b2f1-00bec42cd5f4/match", map[string]any{"condition": "true"})
	if n := len(f.events(t, "")); n != 1 {
		t.Fatalf("trying conditions made %d events, want the one", n)
	}
}
