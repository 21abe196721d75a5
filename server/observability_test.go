package server_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	v := env.newClient().must(200, "GET", "/api/version", nil).JSON()
	if v["version"] != "0.1.0" || v["api_version"] != "0.1.0" || !strings.HasPrefix(v["go_version"].(string), "go") || v["llm_configured"] != false {
		t.Fatalf("version: %v", v)
	}
	if _, err := time.Parse(time.RFC3339, v["started_at"].(string)); err != nil {
		t.Fatalf("started_at: %v", err)
	}
}

func TestClientErrorsAreStoredScrubbed(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := env.register("ada@example.com")
	jwt := c.Token
	c.Token = ""
	c.must(204, "POST", "/api/observability/client-errors", map[string]any{
		"message":    "TypeError at " + jwt + " for ada@example.com with opsk_AbCdEf0123456789xyz",
		"stack":      "at fetch (app.js:1)\nAuthorization: Bearer abc.def.ghi\nrefresh_token=supersecretvalue&x=1",
		"url":        "https://console.example/tasks/123?token=leaky&email=ada@example.com#frag",
		"user_agent": "Mozilla/5.0 test",
		"extra":      map[string]any{"password": "hunter2"},
	})
	var path, msg, stack, ua string
	if err := env.DB.Reader().QueryRow(`SELECT path, message, stack, user_agent FROM client_errors`).Scan(&path, &msg, &stack, &ua); err != nil {
		t.Fatal(err)
	}
	row := path + "\n" + msg + "\n" + stack + "\n" + ua
	for _, secret := range []string{jwt, "eyJ", "ada@example.com", "opsk_", "abc.def.ghi", "supersecretvalue", "leaky", "token=leaky", "frag", "hunter2", "console.example"} {
		if strings.Contains(row, secret) {
			t.Fatalf("stored row keeps %q:\n%s", secret, row)
		}
	}
	if path != "/tasks/123" || !strings.HasPrefix(msg, "TypeError at ") || !strings.Contains(stack, "at fetch (app.js:1)") || ua != "Mozilla/5.0 test" {
		t.Fatalf("useful parts lost: path %q msg %q stack %q ua %q", path, msg, stack, ua)
	}
	wantValidation(t, c.do("POST", "/api/observability/client-errors", map[string]any{}), "body", "message")
}

func TestClientEvents(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.UseClock()
	c := env.newClient()
	for _, ev := range []string{"dashboard.opened", "console.", "Console.opened", "console.Opened", "console.a b"} {
		wantValidation(t, c.do("POST", "/api/observability/client-events", map[string]any{"event": ev}), "body", "event")
	}
	wantValidation(t, c.do("POST", "/api/observability/client-events", map[string]any{}), "body", "event")
	r := c.must(200, "POST", "/api/observability/client-events", map[string]any{"event": "console.task.created", "props": map[string]any{
		"long":   strings.Repeat("x", 100),
		"count":  3,
		"flag":   true,
		"nested": map[string]any{"secret": "value"},
		"list":   []any{1, 2},
		"email":  "ada@example.com",
	}})
	if r.JSON()["accepted"] != true {
		t.Fatalf("answer: %s", r.Body)
	}
	var props string
	if err := env.DB.Reader().QueryRow(`SELECT props FROM client_events WHERE event = 'console.task.created'`).Scan(&props); err != nil {
		t.Fatal(err)
	}
	var labels map[string]string
	if err := json.Unmarshal([]byte(props), &labels); err != nil {
		t.Fatalf("props %q: %v", props, err)
	}
	for k, v := range labels {
		if len([]rune(v)) > 32 {
			t.Fatalf("label %s longer than 32: %q", k, v)
		}
	}
	if labels["count"] != "3" || labels["flag"] != "true" || labels["nested"] != "object" || labels["list"] != "list" || strings.Contains(props, "ada@example.com") || strings.Contains(props, "secret") {
		t.Fatalf("labels: %v", labels)
	}

	// 100 requests a minute per caller; the 101st is refused with Retry-After.
	// (The 7 requests above count: the limit guards the endpoint, valid or not.)
	for i := 7; i < 100; i++ {
		c.must(200, "POST", "/api/observability/client-events", map[string]any{"event": "console.tick"})
	}
	retryAfter(t, c.do("POST", "/api/observability/client-events", map[string]any{"event": "console.tick"}))
	// A signed-in caller has a budget of their own.
	u := env.register("ada@example.com")
	u.must(200, "POST", "/api/observability/client-events", map[string]any{"event": "console.tick"})
	env.Advance(2 * time.Minute)
	c.must(200, "POST", "/api/observability/client-events", map[string]any{"event": "console.tick"})
}
