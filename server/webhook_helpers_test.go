package server_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"testing"
	"time"
)

// hookFixture is a project with a task whose webhook is configured.
type hookFixture struct {
	env    *testEnv
	owner  *client
	task   string
	secret string
	hook   map[string]any
}

// newHook creates a task and its webhook with cfg (provider required).
func newHook(t *testing.T, env *testEnv, owner *client, cfg map[string]any) *hookFixture {
	t.Helper()
	if owner.Project == "" {
		withProject(t, env, owner)
	}
	task := createTask(t, owner, map[string]any{"name": "on alert", "prompt": "investigate the alert", "overlap_policy": "queue"})["id"].(string)
	h := owner.must(200, "PUT", "/api/tasks/"+task+"/webhook", cfg).JSON()
	f := &hookFixture{env: env, owner: owner, task: task, hook: h}
	if s, ok := h["secret"].(string); ok {
		f.secret = s
	}
	return f
}

// post sends a raw delivery to the receiver with headers h.
func (f *hookFixture) post(t *testing.T, body []byte, h http.Header) *resp {
	t.Helper()
	return postDelivery(t, f.env.URL+"/api/webhooks/"+f.task, body, h)
}

func postDelivery(t *testing.T, url string, body []byte, h http.Header) *resp {
	t.Helper()
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range h {
		req.Header[k] = vs
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return &resp{Status: res.StatusCode, Header: res.Header, Body: b}
}

func bearer(secret string) http.Header { return http.Header{"Authorization": {"Bearer " + secret}} }

// events lists the webhook's events.
func (f *hookFixture) events(t *testing.T, query string) []map[string]any {
	t.Helper()
	var page struct {
		Items []map[string]any `json:"items"`
		Total int              `json:"total"`
	}
	f.owner.must(200, "GET", "/api/tasks/"+f.task+"/webhook/events?limit=200"+query, nil).decode(t, &page)
	return page.Items
}

// dispatch waits until no event of the webhook is waiting for dispatch.
func (f *hookFixture) dispatch(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if len(f.events(t, "&status=received")) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("events still waiting for dispatch after 30s")
}

// amAlert is an Alertmanager delivery of one alert.
func amAlert(group, fingerprint, status string) []byte {
	return []byte(`{"version":"4","groupKey":"` + group + `","status":"` + status + `","receiver":"opsagent",
		"groupLabels":{"alertname":"HighLatency"},"commonLabels":{"alertname":"HighLatency","severity":"critical"},
		"commonAnnotations":{},"externalURL":"http://am:9093","alerts":[{"status":"` + status + `",
		"labels":{"alertname":"HighLatency","severity":"critical","service":"api"},
		"annotations":{"summary":"p99 above 2s","token":"s3cr3t-token"},"startsAt":"2024-05-01T10:00:00Z",
		"endsAt":"0001-01-01T00:00:00Z","generatorURL":"http://prom/graph","fingerprint":"` + fingerprint + `"}]}`)
}

func hmacSHA256Hex(key, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// bravoHook is another tenant's live webhook with one of each of its
// records, for the isolation sweep.
type bravoHook struct {
	task, event, rule, approval, incident string
}

// bravoWebhook configures an Alertmanager webhook on task (owner acts in
// the task's project) with a requires_approval rule and delivers one alert:
// that yields a stored event, the rule, the approval it opened and the
// incident the alert opened.
func bravoWebhook(t *testing.T, env *testEnv, owner *client, task string) *bravoHook {
	t.Helper()
	secret := owner.must(200, "PUT", "/api/tasks/"+task+"/webhook", map[string]any{"provider": "alertmanager"}).JSON()["secret"].(string)
	rule := owner.must(201, "POST", "/api/tasks/"+task+"/webhook/rules", map[string]any{"name": "ask first", "requires_approval": true}).JSON()["id"].(string)
	f := &hookFixture{env: env, owner: owner, task: task, secret: secret}
	r := f.post(t, amAlert("bravo-group", "bravo-fp", "firing"), bearer(secret))
	if r.Status != 202 {
		t.Fatalf("bravo delivery: %d %s", r.Status, r.Body)
	}
	f.dispatch(t)
	h := &bravoHook{task: task, rule: rule, event: r.JSON()["event_id"].(string)}
	for _, d := range f.event(t, h.event)["dispatch"].([]any) {
		switch it := d.(map[string]any); it["kind"] {
		case "approval":
			h.approval = it["id"].(string)
		case "incident":
			h.incident = it["id"].(string)
		}
	}
	if h.approval == "" || h.incident == "" {
		t.Fatalf("bravo's delivery opened no approval or incident: %+v", h)
	}
	return h
}

// untouched fails unless bravo's webhook records are as bravoWebhook left
// them (owner acts in bravo's project).
func (h *bravoHook) untouched(t *testing.T, owner *client) {
	t.Helper()
	hook := owner.must(200, "GET", "/api/tasks/"+h.task+"/webhook", nil).JSON()
	if hook["provider"] != "alertmanager" || hook["secret"] != nil {
		t.Fatalf("bravo webhook changed: %v", hook)
	}
	if ev := owner.must(200, "GET", "/api/tasks/"+h.task+"/webhook/events/"+h.event, nil).JSON(); ev["status"] != "approval_pending" {
		t.Fatalf("bravo event changed: %v", ev)
	}
	if rs := owner.must(200, "GET", "/api/tasks/"+h.task+"/webhook/rules", nil).List(); len(rs) != 1 || rs[0]["name"] != "ask first" {
		t.Fatalf("bravo rules changed: %v", rs)
	}
	if a := owner.must(200, "GET", "/api/approvals/"+h.approval, nil).JSON(); a["status"] != "pending" {
		t.Fatalf("bravo approval decided: %v", a)
	}
	inc := owner.must(200, "GET", "/api/incidents/"+h.incident, nil).JSON()
	if inc["status"] != "triggered" || len(inc["timeline"].([]any)) != 2 { // the alert and the approval
		t.Fatalf("bravo incident changed: %v", inc)
	}
	if evs := owner.must(200, "GET", "/api/tasks/"+h.task+"/webhook/events", nil).JSON()["items"].([]any); len(evs) != 1 {
		t.Fatalf("bravo events replayed or purged: %v", evs)
	}
}
