package cli_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// changes create and list, and incidents show with the investigation's
// finding, against the real server and the scripted model.
func TestChangesAndIncidentFinding(t *testing.T) {
	s := startServer(t,
		llmfake.Reply("", llmfake.Call{ID: "call_f", Name: "report_finding", Arguments: `{"summary":"The api deploy exhausted the pool.",
			"hypotheses":[{"cause":"pool_size lowered in v2","confidence":"high","evidence":["ev1","nothing"]}],
			"impact":"p99 above 2s","next_steps":[{"action":"roll back","command":"deploy rollback api","target":"server","needs_approval":true}]}`}),
		llmfake.Text("Reported."),
	)
	u := s.newUser("changes@example.com")
	env := s.cliEnv(t.TempDir(), u.key)
	ok(t, env, "projects", "use", u.project)

	created := decode[map[string]any](t, ok(t, env, "changes", "create", "deploy api v2 (pool_size 5)", "--service", "api", "--label", "team=web", "--json").stdout)
	if created["status"] != "created" || created["source"] != "api" {
		t.Fatalf("changes create: %v", created)
	}
	list := ok(t, env, "changes", "list", "--service", "api", "--since", "1h").stdout
	if !strings.Contains(list, "deploy api v2 (pool_size 5)") || !strings.Contains(list, "api") {
		t.Fatalf("changes list:\n%s", list)
	}
	if out := ok(t, env, "changes", "list", "--label", "team=other").stdout; strings.Contains(out, "deploy api v2") {
		t.Fatalf("label filter:\n%s", out)
	}

	task := s.must(201, "POST", "/api/tasks", u.token, u.project, map[string]any{"name": "on alert", "prompt": "investigate"})["id"].(string)
	secret := s.must(200, "PUT", "/api/tasks/"+task+"/webhook", u.token, u.project, map[string]any{"provider": "alertmanager"})["secret"].(string)
	body := []byte(`{"version":"4","groupKey":"g","status":"firing","receiver":"x","groupLabels":{},"commonLabels":{"alertname":"HighLatency"},
		"commonAnnotations":{},"externalURL":"http://am","alerts":[{"status":"firing","labels":{"alertname":"HighLatency","service":"api"},
		"annotations":{"summary":"p99 above 2s"},"startsAt":"2026-01-01T00:00:00Z","endsAt":"0001-01-01T00:00:00Z","fingerprint":"f1"}]}`)
	req, _ := http.NewRequest("POST", s.URL+"/api/webhooks/"+task, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 202 {
		t.Fatalf("delivery: %v %v", err, res)
	}
	res.Body.Close()
	var inc string
	deadline := time.Now().Add(30 * time.Second)
	for {
		items, _ := s.must(200, "GET", "/api/incidents", u.token, u.project, nil)["items"].([]any)
		if len(items) == 1 {
			inc = items[0].(map[string]any)["id"].(string)
			if d := s.must(200, "GET", "/api/incidents/"+inc, u.token, u.project, nil); d["latest_finding"] != nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no finding on the incident after 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	show := ok(t, env, "incidents", "show", inc).stdout
	for _, want := range []string{"finding: The api deploy exhausted the pool.", "[high] pool_size lowered in v2 (ev1)", "impact: p99 above 2s",
		"next 0: roll back — deploy rollback api on server (needs approval)", "dropped references: nothing", "change", "deploy api v2 (pool_size 5)"} {
		if !strings.Contains(show, want) {
			t.Fatalf("incidents show lacks %q:\n%s", want, show)
		}
	}
}
