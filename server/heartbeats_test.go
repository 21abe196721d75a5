package server_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// incidentsOf lists the project's incidents.
func incidentsOf(t *testing.T, c *client) []map[string]any {
	t.Helper()
	var page struct {
		Items []map[string]any `json:"items"`
	}
	c.must(200, "GET", "/api/incidents?limit=200", nil).decode(t, &page)
	return page.Items
}

// sweep runs the heartbeat sweep n times, as its ticker would: a second run
// over the same misses must change nothing.
func sweep(t *testing.T, env *testEnv, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if err := env.Srv.RunHeartbeatSweep(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// restartLater restarts the server on its database with the fake clock d
// later (the process was down that long) and points owner at it.
func restartLater(env *testEnv, owner *client, d time.Duration) *testEnv {
	next := env.Restart(openSignup)
	next.UseClock()
	next.Advance(d)
	owner.env = next
	return next
}

func TestHeartbeatMissOpensOneIncidentAcrossRestart(t *testing.T) {
	env := newEnv(t, openSignup)
	env.UseClock()
	human := env.register("owner@example.com")
	project := env.newProject(human, "prod")
	// An API key: the clock moves past the access token's life.
	owner, _ := env.apiKey(t, human, map[string]any{"name": "ops", "scopes": []string{"*"}})
	owner.Project = project
	task := owner.must(201, "POST", "/api/tasks", map[string]any{"name": "backup check", "prompt": "look at the backup"}).JSON()

	wantValidation(t, owner.do("POST", "/api/heartbeats", map[string]any{"name": "x", "grace_seconds": 60}), "body", "schedule")
	wantValidation(t, owner.do("POST", "/api/heartbeats", map[string]any{"name": "x", "schedule": "61 * * * *", "grace_seconds": 60}), "body", "schedule")
	wantValidation(t, owner.do("POST", "/api/heartbeats", map[string]any{"name": "x", "period_seconds": 3600, "grace_seconds": 5}), "body", "grace_seconds")

	created := owner.must(201, "POST", "/api/heartbeats", map[string]any{"name": "nightly backup", "period_seconds": 3600,
		"grace_seconds": 300, "task_id": task["id"]}).JSON()
	secret, _ := created["secret"].(string)
	if !strings.HasPrefix(secret, "ohb_") || !strings.HasSuffix(created["ping_url"].(string), "/api/ping/"+secret) {
		t.Fatalf("created: %v", created)
	}
	id := created["id"].(string)
	// The secret is never shown again.
	if got := owner.must(200, "GET", "/api/heartbeats/"+id, nil); strings.Contains(string(got.Body), secret) {
		t.Fatalf("secret shown again: %s", got.Body)
	}
	anon := env.newClient()
	anon.must(404, "POST", "/api/ping/ohb_"+strings.Repeat("x", 32), nil)

	// start then success: up with a duration.
	anon.must(200, "POST", "/api/ping/"+secret+"/start", nil)
	env.Advance(90 * time.Second)
	if got := anon.must(200, "GET", "/api/ping/"+secret, nil).JSON(); got["status"] != "up" {
		t.Fatalf("after success: %v", got)
	}
	chk := owner.must(200, "GET", "/api/heartbeats/"+id, nil).JSON()
	if chk["last_duration_ms"] != float64(90000) || len(chk["pings"].([]any)) != 2 {
		t.Fatalf("check after start/finish: %v", chk)
	}

	// Inside period + grace nothing happens.
	env.Advance(time.Hour + 4*time.Minute)
	sweep(t, env, 1)
	if n := len(incidentsOf(t, owner)); n != 0 {
		t.Fatalf("incidents before the deadline: %d", n)
	}
	// Past it: exactly one incident, however often the sweep runs, also after a restart.
	env.Advance(2 * time.Minute)
	sweep(t, env, 3)
	env2 := restartLater(env, owner, 3*time.Hour)
	sweep(t, env2, 1)
	incs := incidentsOf(t, owner)
	if len(incs) != 1 || incs[0]["provider"] != "heartbeat" || incs[0]["session_id"] == nil {
		t.Fatalf("want one heartbeat incident with a run, got %v", incs)
	}
	chk = owner.must(200, "GET", "/api/heartbeats/"+id, nil).JSON()
	if chk["status"] != "down" || chk["misses"] != float64(1) || chk["incident_id"] != incs[0]["id"] {
		t.Fatalf("check after miss: %v", chk)
	}
	var sessions []map[string]any
	owner.must(200, "GET", "/api/sessions?limit=200", nil).decode(t, &sessions)
	runs := 0
	for _, s := range sessions {
		if s["id"] == incs[0]["session_id"] || s["session_id"] == incs[0]["session_id"] {
			runs++
		}
	}
	if runs != 1 {
		t.Fatalf("the miss's run: %d sessions match %v", runs, incs[0]["session_id"])
	}

	// Recovery closes the incident; a fail ping opens the next miss, once.
	anon2 := env2.newClient()
	anon2.must(200, "POST", "/api/ping/"+secret, nil)
	if got := incidentsOf(t, owner); got[0]["status"] != "resolved" {
		t.Fatalf("after recovery: %v", got)
	}
	anon2.must(200, "POST", "/api/ping/"+secret+"/fail", nil)
	anon2.must(200, "POST", "/api/ping/"+secret+"/fail", nil)
	sweep(t, env2, 1)
	incs = incidentsOf(t, owner)
	open := 0
	for _, i := range incs {
		if i["status"] == "triggered" {
			open++
		}
	}
	if len(incs) != 2 || open != 1 {
		t.Fatalf("after two fail pings: %v", incs)
	}

	if strings.Contains(env.Logs.String(), secret) || strings.Contains(env2.Logs.String(), secret) {
		t.Fatal("the ping secret is in the log")
	}
	// Badge: public, no secret.
	badge := anon2.must(200, "GET", strings.TrimPrefix(chk["badge_url"].(string), ""), nil)
	if !strings.Contains(string(badge.Body), "down") || badge.Header.Get("Content-Type") != "image/svg+xml; charset=utf-8" {
		t.Fatalf("badge: %s %s", badge.Header, badge.Body)
	}
}

func TestHeartbeatPingRateLimited(t *testing.T) {
	env := newEnv(t, openSignup)
	owner := env.register("owner@example.com")
	owner.Project = env.newProject(owner, "prod")
	created := owner.must(201, "POST", "/api/heartbeats", map[string]any{"name": "cron", "schedule": "*/5 * * * *",
		"timezone": "Europe/Berlin", "grace_seconds": 60}).JSON()
	anon := env.newClient()
	var last *resp
	for i := 0; i < 40; i++ {
		last = anon.do("POST", "/api/ping/"+created["secret"].(string), nil)
	}
	if last.Status != 429 || last.Header.Get("Retry-After") == "" {
		t.Fatalf("got %d %s, want 429 with Retry-After", last.Status, last.Header)
	}
}

// A deadline that passes while the server is stopped becomes one miss
// after the restart, however often the sweep then runs.
func TestHeartbeatMissedWhileStopped(t *testing.T) {
	env := newEnv(t, openSignup)
	human := env.register("owner@example.com")
	project := env.newProject(human, "prod")
	owner, _ := env.apiKey(t, human, map[string]any{"name": "ops", "scopes": []string{"*"}})
	owner.Project = project
	created := owner.must(201, "POST", "/api/heartbeats", map[string]any{"name": "hourly", "schedule": "0 * * * *", "grace_seconds": 600}).JSON()
	env2 := restartLater(env, owner, 3*time.Hour)
	sweep(t, env2, 3)
	env3 := restartLater(env2, owner, 6*time.Hour)
	sweep(t, env3, 1)
	if incs := incidentsOf(t, owner); len(incs) != 1 {
		t.Fatalf("want one incident, got %v", incs)
	}
	if got := owner.must(200, "GET", "/api/heartbeats/"+created["id"].(string), nil).JSON(); got["misses"] != float64(1) || got["status"] != "down" {
		t.Fatalf("check: %v", got)
	}
}
