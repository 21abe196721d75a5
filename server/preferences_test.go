package server_test

import (
	"strings"
	"testing"
)

func TestPreferencesCRUD(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	c := env.register("ada@example.com")
	if l := c.must(200, "GET", "/api/me/preferences", nil).List(); len(l) != 0 {
		t.Fatalf("fresh list: %v", l)
	}
	if r := c.do("GET", "/api/me/preferences/theme", nil); r.Status != 404 {
		t.Fatalf("missing key: got %d, want 404", r.Status)
	}
	p := c.must(200, "PUT", "/api/me/preferences/theme", map[string]any{"value": map[string]any{"mode": "dark"}}).JSON()
	if p["key"] != "theme" || p["value"].(map[string]any)["mode"] != "dark" || p["created_at"] == nil {
		t.Fatalf("put: got %v", p)
	}
	c.must(200, "PUT", "/api/me/preferences/theme", map[string]any{"value": "light"})
	c.must(200, "PUT", "/api/me/preferences/console.sidebar_width", map[string]any{"value": 240})
	got := c.must(200, "GET", "/api/me/preferences/theme", nil).JSON()
	if got["value"] != "light" {
		t.Fatalf("get after replace: %v", got)
	}
	list := c.must(200, "GET", "/api/me/preferences", nil).List()
	if len(list) != 2 || list[0]["key"] != "console.sidebar_width" || list[1]["key"] != "theme" {
		t.Fatalf("list: %v", list)
	}
	// Another user sees none of them.
	other := env.register("bob@example.com")
	if r := other.do("GET", "/api/me/preferences/theme", nil); r.Status != 404 {
		t.Fatalf("other user's key: got %d, want 404", r.Status)
	}

	c.must(204, "DELETE", "/api/me/preferences/theme", nil)
	if r := c.do("DELETE", "/api/me/preferences/theme", nil); r.Status != 404 {
		t.Fatalf("delete twice: got %d, want 404", r.Status)
	}

	for _, key := range []string{"Theme", "_x", "has%20space", strings.Repeat("k", 121)} {
		for _, m := range []string{"GET", "PUT", "DELETE"} {
			var body any
			if m == "PUT" {
				body = map[string]any{"value": 1}
			}
			wantValidation(t, c.do(m, "/api/me/preferences/"+key, body), "path", "key")
		}
	}
	c.must(200, "PUT", "/api/me/preferences/"+strings.Repeat("k", 120), map[string]any{"value": true})
	wantValidation(t, c.do("PUT", "/api/me/preferences/theme", map[string]any{}), "body", "value")
	wantValidation(t, c.do("PUT", "/api/me/preferences/theme", `{"value":`), "body")
	if r := c.do("PUT", "/api/me/preferences/theme", map[string]any{"value": strings.Repeat("x", 17<<10)}); r.Status != 413 {
		t.Fatalf("oversized value: got %d, want 413", r.Status)
	}
	want401(t, "anonymous", env.newClient().do("GET", "/api/me/preferences", nil))
}
