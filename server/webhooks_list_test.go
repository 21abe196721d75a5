package server_test

import (
	"testing"
)

// GET /api/webhooks lists the webhooks of the project's tasks and nothing
// else: a task without one is absent, another project's are not seen.
func TestListWebhooks(t *testing.T) {
	env := newEnv(t, openSignup)
	c := env.register("op@example.com")
	withProject(t, env, c)
	task := func(name string) string {
		return c.must(201, "POST", "/api/tasks", map[string]any{"name": name, "prompt": "check"}).JSON()["id"].(string)
	}
	with, without := task("with a hook"), task("without")
	c.must(200, "PUT", "/api/tasks/"+with+"/webhook", map[string]any{"provider": "alertmanager"})

	page := c.must(200, "GET", "/api/webhooks", nil).JSON()
	items := page["items"].([]any)
	if len(items) != 1 || page["total"] != float64(1) || items[0].(map[string]any)["task_id"] != with {
		t.Fatalf("webhooks: %v, want only the one of %s (not %s)", page, with, without)
	}
	if h := items[0].(map[string]any); h["provider"] != "alertmanager" || h["secret"] != nil {
		t.Fatalf("listed webhook %v: want its provider and never its secret", h)
	}

	other := env.register("other@example.com")
	withProject(t, env, other)
	if got := other.must(200, "GET", "/api/webhooks", nil).JSON()["items"].([]any); len(got) != 0 {
		t.Fatalf("another tenant sees %v", got)
	}
	wantValidation(t, c.do("GET", "/api/webhooks?limit=201", nil), "query", "limit")
}
