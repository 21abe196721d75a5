package server_test

import (
	"testing"
)

// The events list and the event detail agree on body_kept: a webhook that
// keeps bodies lists its events as kept, and a metadata-only one as not.
func TestWebhookEventListBodyKeptMatchesDetail(t *testing.T) {
	env := newEnv(t)
	owner := env.register("owner@example.com")
	f := newHook(t, env, owner, map[string]any{"provider": "alertmanager", "metadata_only": false})
	f.post(t, amAlert("g1", "f1", "firing"), bearer(f.secret))
	f.dispatch(t)
	owner.must(200, "PUT", "/api/tasks/"+f.task+"/webhook", map[string]any{"metadata_only": true})
	f.post(t, amAlert("g2", "f2", "firing"), bearer(f.secret))
	f.dispatch(t)
	evs := f.events(t, "")
	if len(evs) != 2 {
		t.Fatalf("got %d events, want 2", len(evs))
	}
	for _, row := range evs {
		ev := owner.must(200, "GET", "/api/tasks/"+f.task+"/webhook/events/"+row["id"].(string), nil).JSON()
		if row["body_kept"] != ev["body_kept"] || ev["body_kept"] != (ev["body"] != nil) {
			t.Fatalf("list says body_kept %v, detail says %v with body %v", row["body_kept"], ev["body_kept"], ev["body"] != nil)
		}
	}
	if evs[0]["body_kept"] != false || evs[1]["body_kept"] != true {
		t.Fatalf("got body_kept %v (metadata-only) and %v (kept), want false and true", evs[0]["body_kept"], evs[1]["body_kept"])
	}
}
