package server_test

import (
	"testing"
	"time"

	"github.com/opsagent/opsagent/store"
)

// Isolation of the chat channel routes. The shared sweep (isolation_test.go)
// probes them with a foreign X-Project-ID; TestChannelsIsolation probes a
// foreign channel's id from the caller's own project, and the inbound
// routes with another channel's secret.

func init() {
	random := store.NewID()
	for _, r := range []struct{ method, path, concrete string }{
		{"GET", "/api/channels", "/api/channels"},
		{"POST", "/api/channels", "/api/channels"},
		{"GET", "/api/channels/{channel_id}", "/api/channels/" + random},
		{"PATCH", "/api/channels/{channel_id}", "/api/channels/" + random},
		{"DELETE", "/api/channels/{channel_id}", "/api/channels/" + random},
		{"POST", "/api/channels/{channel_id}/test", "/api/channels/" + random + "/test"},
		{"POST", "/api/channels/{channel_id}/link-codes", "/api/channels/" + random + "/link-codes"},
		{"GET", "/api/channels/{channel_id}/links", "/api/channels/" + random + "/links"},
		{"DELETE", "/api/channels/{channel_id}/links/{link_id}", "/api/channels/" + random + "/links/" + random},
	} {
		isolationProbes[r.method+" "+r.path] = func(o own, x ids) []probeReq {
			var body any
			switch r.method {
			case "POST":
				body = map[string]any{"platform": "slack", "name": "mole", "credentials": map[string]any{"bot_token": "x", "signing_secret": "y"}}
			case "PATCH":
				body = map[string]any{"enabled": false}
			}
			return inProject(x, r.method, r.concrete, body)
		}
	}
	isolationProbes["GET /api/tasks/{task_id}/channel"] = func(o own, x ids) []probeReq {
		return bothProjects(o, x, "GET", "/api/tasks/"+x.task+"/channel", nil)
	}
	isolationProbes["PUT /api/tasks/{task_id}/channel"] = func(o own, x ids) []probeReq {
		return bothProjects(o, x, "PUT", "/api/tasks/"+x.task+"/channel", map[string]any{"channel_id": random, "conversation": "C1"})
	}
	isolationProbes["DELETE /api/tasks/{task_id}/channel"] = func(o own, x ids) []probeReq {
		return bothProjects(o, x, "DELETE", "/api/tasks/"+x.task+"/channel", nil)
	}
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		isolationProbes[m+" /api/tasks/{task_id}/webhook/rules/{rule_id}/channel"] = func(o own, x ids) []probeReq {
			var body any
			if m == "PUT" {
				body = map[string]any{"channel_id": random, "conversation": "C1"}
			}
			return bothProjects(o, x, m, "/api/tasks/"+x.task+"/webhook/rules/"+x.whRule+"/channel", body)
		}
	}
	// Inbound platform routes carry no credential of ours: the platform's
	// signature with the channel's own secret is the check (probed below).
	for _, p := range []string{"POST /api/inbound/slack/{channel_id}", "POST /api/inbound/telegram/{channel_id}",
		"POST /api/inbound/whatsapp/{channel_id}", "GET /api/inbound/whatsapp/{channel_id}"} {
		isolationProbes[p] = nil
	}
}

func TestChannelsIsolation(t *testing.T) {
	env := newEnv(t, openSignup)
	a := env.newTenant(t, "alpha")
	b := env.newTenant(t, "bravo")
	a.owner.Project, b.owner.Project = a.project, b.project
	bCh := b.owner.must(201, "POST", "/api/channels", map[string]any{"platform": "slack", "name": "bravo-slack",
		"credentials": map[string]any{"bot_token": "xoxb-bravo", "signing_secret": "bravo-secret"}}).JSON()["id"].(string)
	aCh := a.owner.must(201, "POST", "/api/channels", map[string]any{"platform": "slack", "name": "alpha-slack",
		"credentials": map[string]any{"bot_token": "xoxb-alpha", "signing_secret": "alpha-secret"}}).JSON()["id"].(string)
	b.owner.must(201, "POST", "/api/channels/"+bCh+"/link-codes", nil)

	random := store.NewID()
	reqs := func(id string) []probeReq {
		return []probeReq{
			{method: "GET", path: "/api/channels/" + id},
			{method: "PATCH", path: "/api/channels/" + id, body: map[string]any{"enabled": false, "name": "pwned"}},
			{method: "POST", path: "/api/channels/" + id + "/test"},
			{method: "POST", path: "/api/channels/" + id + "/link-codes"},
			{method: "GET", path: "/api/channels/" + id + "/links"},
			{method: "DELETE", path: "/api/channels/" + id + "/links/" + random},
			{method: "DELETE", path: "/api/channels/" + id},
		}
	}
	for role, c := range a.byRole {
		real, ctrl := reqs(bCh), reqs(random)
		for i := range real {
			real[i].project, ctrl[i].project = a.project, a.project
			got, want := send(c, real[i]), send(c, ctrl[i])
			if got.Status != want.Status || got.Status < 400 || string(got.Body) != string(want.Body) {
				t.Errorf("LEAK as %s: %s %s answered %d %s; a random id answers %d %s", role, real[i].method, real[i].path, got.Status, got.Body, want.Status, want.Body)
			}
		}
	}
	// A task of alpha cannot post to bravo's channel.
	task := createTask(t, a.owner, map[string]any{"name": "alpha-task", "prompt": "p"})["id"].(string)
	got := a.owner.do("PUT", "/api/tasks/"+task+"/channel", map[string]any{"channel_id": bCh, "conversation": "C1"})
	want := a.owner.do("PUT", "/api/tasks/"+task+"/channel", map[string]any{"channel_id": random, "conversation": "C1"})
	if got.Status != 404 || string(got.Body) != string(want.Body) {
		t.Errorf("LEAK: alpha's task pointed at bravo's channel: %d %s (random: %d %s)", got.Status, got.Body, want.Status, want.Body)
	}
	list := a.owner.must(200, "GET", "/api/channels", nil).JSON()["items"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["id"] != aCh {
		t.Fatalf("alpha lists %v", list)
	}
	if ch := b.owner.must(200, "GET", "/api/channels/"+bCh, nil).JSON(); ch["enabled"] != true || ch["name"] != "bravo-slack" {
		t.Fatalf("bravo's channel changed: %v", ch)
	}

	// Another channel's secret does not open a channel's inbound route.
	body := fixture(t, "slack/app_mention.json", nil)
	if r := slackPost(env, bCh, body, time.Now(), "application/json", "alpha-secret", 0); r.Status != 401 {
		t.Fatalf("bravo's inbound signed with alpha's secret: %d", r.Status)
	}
	// An inbound route of another platform does not serve the channel.
	if r := slackPost(env, bCh, body, time.Now(), "application/json", "bravo-secret", 0); r.Status != 200 {
		t.Fatalf("bravo's own signature: %d %s", r.Status, r.Body)
	}
	req := mustRequest(t, "POST", env.URL+"/api/inbound/telegram/"+bCh, "application/json", `{"update_id":1}`)
	req.Header.Set("X-Telegram-Bot-Api-Secret-Token", "bravo-secret")
	if r := env.newClient().send(req); r.Status != 404 {
		t.Fatalf("a Slack channel on the Telegram route: %d", r.Status)
	}
}
