package server_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server"
)

// The events list and the event detail agree on body_kept: a webhook that
// keeps bodies lists its events as kept, and a metadata-only one as not.
func TestWebhookEventListBodyKeptMatchesDetail(t *testing.T) {
	t.Parallel()
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

// paddedJSON is a JSON object of about n bytes.
func paddedJSON(n int) []byte {
	return []byte(`{"title":"big","pad":"` + strings.Repeat("x", n) + `"}`)
}

// The webhook delivery limit is its own setting, independent of the API's
// --max-body-bytes, and OpenAPI shows the limit in force.
func TestWebhookBodyLimitIsItsOwnSetting(t *testing.T) {
	t.Parallel()
	env := newEnv(t, func(c *server.Config) { c.MaxBodyBytes = 2000; c.WebhookMaxBodyBytes = 4 << 20 })
	owner := env.register("owner@example.com")
	f := newHook(t, env, owner, map[string]any{"provider": "generic", "scheme": "bearer", "dedupe_window_seconds": 0})
	if r := f.post(t, paddedJSON(2<<20), bearer(f.secret)); r.Status != 202 {
		t.Fatalf("2 MiB delivery under a 4 MiB webhook limit: got %d %s, want 202", r.Status, r.Body)
	}
	if r := f.post(t, paddedJSON(5<<20), bearer(f.secret)); r.Status != 413 || !strings.Contains(string(r.Body), "4194304") {
		t.Fatalf("5 MiB delivery: got %d %s, want 413 naming 4194304", r.Status, r.Body)
	}
	ops := owner.must(200, "GET", "/api/openapi.json", nil).JSON()["paths"].(map[string]any)
	recv := ops["/api/webhooks/{task_id}"].(map[string]any)["post"].(map[string]any)
	if recv["x-max-body-bytes"] != float64(4<<20) || recv["responses"].(map[string]any)["413"] == nil {
		t.Fatalf("OpenAPI receiver: x-max-body-bytes %v, 413 %v", recv["x-max-body-bytes"], recv["responses"].(map[string]any)["413"])
	}

	small := newEnv(t, func(c *server.Config) { c.WebhookMaxBodyBytes = 2000 })
	owner = small.register("owner@example.com")
	g := newHook(t, small, owner, map[string]any{"provider": "generic", "scheme": "bearer"})
	if r := g.post(t, paddedJSON(10<<10), bearer(g.secret)); r.Status != 413 || !strings.Contains(string(r.Body), "2000") {
		t.Fatalf("10 KB delivery over a 2,000-byte webhook limit: got %d %s, want 413 naming 2000", r.Status, r.Body)
	}
	if n := len(g.events(t, "")); n != 0 {
		t.Fatalf("a refused delivery was stored: %d events", n)
	}
}

// The flag has its OPSAGENT_ twin, and a negative value is refused.
func TestWebhookBodyLimitFlagAndEnv(t *testing.T) {
	t.Parallel()
	var c server.Config
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	c.Flags(fs)
	env := map[string]string{"OPSAGENT_WEBHOOK_MAX_BODY_BYTES": "3000"}
	if err := server.ApplyEnv(fs, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse(nil); err != nil || c.WebhookMaxBodyBytes != 3000 {
		t.Fatalf("env: got %d (%v), want 3000", c.WebhookMaxBodyBytes, err)
	}
	if err := fs.Parse([]string{"--webhook-max-body-bytes", "5000"}); err != nil || c.WebhookMaxBodyBytes != 5000 {
		t.Fatalf("flag: got %d (%v), want 5000", c.WebhookMaxBodyBytes, err)
	}
	c.WebhookMaxBodyBytes = -1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "webhook-max-body-bytes") {
		t.Fatalf("negative limit: got %v, want an error naming the flag", err)
	}
}

// amGroup is an Alertmanager notification of one group carrying the alerts
// fingerprinted fp<from> .. fp<to-1>, as Alertmanager re-sends a group's
// alerts with every notification.
func amGroup(group string, from, to int) []byte {
	var alerts []string
	for i := from; i < to; i++ {
		alerts = append(alerts, fmt.Sprintf(`{"status":"firing","labels":{"alertname":"HighLatency","instance":"i%03d"},
			"annotations":{},"startsAt":"2024-05-01T10:00:00Z","endsAt":"0001-01-01T00:00:00Z","fingerprint":"fp%03d"}`, i, i))
	}
	return []byte(`{"version":"4","groupKey":"` + group + `","status":"firing","receiver":"opsagent",
		"groupLabels":{"alertname":"HighLatency"},"commonLabels":{"alertname":"HighLatency"},"commonAnnotations":{},
		"externalURL":"http://am:9093","alerts":[` + strings.Join(alerts, ",") + `]}`)
}

// 200 distinct alerts arriving in 4 grouped notifications (with re-sends,
// 550 alerts in all) are one incident with alert_count 200 and
// event_count 4.
func TestIncidentCountsDistinctAlerts(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	owner := env.register("owner@example.com")
	f := newHook(t, env, owner, map[string]any{"provider": "alertmanager", "dedupe_window_seconds": 0})
	for _, r := range [][2]int{{0, 100}, {0, 150}, {100, 200}, {0, 200}} {
		if res := f.post(t, amGroup("{}:{alertname=HighLatency}", r[0], r[1]), bearer(f.secret)); res.Status != 202 {
			t.Fatalf("delivery %v: %d %s", r, res.Status, res.Body)
		}
	}
	f.dispatch(t)
	var page struct {
		Items []map[string]any `json:"items"`
	}
	owner.must(200, "GET", "/api/incidents", nil).decode(t, &page)
	if len(page.Items) != 1 {
		t.Fatalf("got %d incidents, want 1", len(page.Items))
	}
	if got := page.Items[0]; got["alert_count"] != float64(200) || got["event_count"] != float64(4) {
		t.Fatalf("got alert_count %v and event_count %v, want 200 and 4", got["alert_count"], got["event_count"])
	}
}
