package cli_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

const unknownID = "0192f0c4-0000-7000-8000-000000000000"

// alertIncident delivers a real Alertmanager alert to a task's webhook and
// waits for the incident it opens: the task's id, the event's, the incident's.
func alertIncident(t *testing.T, s *srv, u *user, env []string) (taskID, eventID, incidentID string) {
	t.Helper()
	task := decode[map[string]any](t, ok(t, env, "tasks", "create", "--json", "--name", "CPU alerts", "--prompt", "Investigate").stdout)
	taskID = task["id"].(string)
	const secret = "whtok_cli_test_secret_0123456789"
	s.must(200, "PUT", "/api/tasks/"+taskID+"/webhook", u.token, u.project, map[string]any{"provider": "alertmanager", "secret": secret})
	req, _ := http.NewRequest("POST", s.URL+"/api/webhooks/"+taskID, bytes.NewReader(alertmanagerDeliveries(t)[0]))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secret)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		t.Fatalf("delivery: %d", res.StatusCode)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		events := s.must(200, "GET", "/api/tasks/"+taskID+"/webhook/events", u.token, u.project, nil)["items"].([]any)
		incidents := s.must(200, "GET", "/api/incidents", u.token, u.project, nil)["items"].([]any)
		if len(events) == 1 && len(incidents) == 1 {
			return taskID, events[0].(map[string]any)["id"].(string), incidents[0].(map[string]any)["id"].(string)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no incident opened: events %v, incidents %v", events, incidents)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// postmortems: draft (with the model), show (fields and the document, or the
// document alone), list in all three forms, publish, and the org's template;
// an unknown incident is exit 3, bad input exit 2 (ours or the server's).
func TestPostmortems(t *testing.T) {
	s := startServer(t, llmfake.Always(llmfake.Text("## Summary\n\nCPU was high on api.\n\n## Action items\n\n- add a CPU runbook\n")))
	u := s.newUser("oncall@example.com")
	env := s.cliEnv(t.TempDir(), u.key)
	_, _, inc := alertIncident(t, s, u, env)

	exits(t, 3, "", env, "postmortems", "show", inc) // no draft yet: the incident is not resolved
	exits(t, 3, "", env, "postmortems", "draft", unknownID)
	exits(t, 2, "takes 1 argument(s) (INCIDENT_ID), got 0", env, "postmortems", "draft")

	r := ok(t, env, "postmortems", "draft", inc)
	if !strings.Contains(r.stdout, "draft") || !strings.Contains(r.stdout, "incidents/postmortem-"+inc+".md") ||
		!strings.Contains(r.stdout, "# Postmortem:") || !strings.Contains(r.stdout, "CPU was high on api.") || !strings.Contains(r.stderr, "postmortems publish "+inc) {
		t.Fatalf("postmortems draft:\n%s\n%s", r.stdout, r.stderr)
	}
	md := ok(t, env, "postmortems", "show", inc, "--markdown").stdout
	if !strings.HasPrefix(md, "# Postmortem:") || !strings.Contains(md, "- add a CPU runbook") || strings.Contains(md, "status:") {
		t.Fatalf("postmortems show --markdown:\n%s", md)
	}
	shown := decode[map[string]any](t, ok(t, env, "postmortems", "show", inc, "--json").stdout)
	if shown["status"] != "draft" || shown["incident_id"] != inc || !strings.Contains(shown["markdown"].(string), "CPU was high") {
		t.Fatalf("postmortems show --json: %v", shown)
	}
	list := ok(t, env, "postmortems", "list").stdout
	if !strings.Contains(list, "INCIDENT") || !strings.Contains(list, inc) || !strings.Contains(list, "draft") {
		t.Fatalf("postmortems list:\n%s", list)
	}
	if page := decode[map[string]any](t, ok(t, env, "postmortems", "list", "--json").stdout); page["total"] != 1.0 {
		t.Fatalf("postmortems list --json: %v", page)
	}
	if q := ok(t, env, "postmortems", "list", "-q").stdout; q != inc+"\n" {
		t.Fatalf("postmortems list -q: %q", q)
	}
	exits(t, 2, "limit", env, "postmortems", "list", "--limit", "500")

	pub := decode[map[string]any](t, ok(t, env, "postmortems", "publish", inc, "--json").stdout)
	if pub["status"] != "published" || pub["published_at"] == nil {
		t.Fatalf("postmortems publish: %v", pub)
	}
	exits(t, 1, "the postmortem is published", env, "postmortems", "draft", inc)
	exits(t, 3, "", env, "postmortems", "publish", unknownID)

	// The org's template: the default, then ours.
	if out := ok(t, env, "postmortems", "template").stdout; !strings.Contains(out, " 1. ") {
		t.Fatalf("postmortems template:\n%s", out)
	}
	if out := ok(t, env, "postmortems", "template", "set", "Summary", "Impact", "Root cause").stdout; out != " 1. Summary\n 2. Impact\n 3. Root cause\n" {
		t.Fatalf("postmortems template set:\n%q", out)
	}
	tpl := decode[map[string]any](t, ok(t, env, "postmortems", "template", "--json").stdout)
	if secs := tpl["sections"].([]any); len(secs) != 3 || secs[2] != "Root cause" {
		t.Fatalf("postmortems template --json: %v", tpl)
	}
	exits(t, 2, "without #", env, "postmortems", "template", "set", "# Summary")
	exits(t, 2, "body.sections.0", env, "postmortems", "template", "set", strings.Repeat("x", 101))
}
