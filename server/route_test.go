package server_test

import "testing"

// Literal and parameter siblings, unknown paths and wrong methods go through
// the one dispatcher in route.go.
func TestRouterEdges(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := env.register("ada@example.com")
	if r := c.do("GET", "/api/nope", nil); r.Status != 404 || r.JSON()["detail"] != "Not Found" {
		t.Fatalf("unknown API path: got %d %s", r.Status, r.Body)
	}
	if r := c.do("PUT", "/api/version", nil); r.Status != 405 {
		t.Fatalf("wrong method: got %d, want 405", r.Status)
	}
	if r := c.do("GET", "/api/auth/me/", nil); r.Status != 404 {
		t.Fatalf("trailing slash: got %d, want 404 (no redirects)", r.Status)
	}
	if r := c.do("GET", "/api/users//avatar", nil); r.Status != 404 {
		t.Fatalf("empty parameter: got %d, want 404", r.Status)
	}
	// Every response carries a request id; a sane one sent by the client is kept.
	c.Header.Set("X-Request-ID", "trace-123")
	if r := c.must(200, "GET", "/api/auth/me", nil); r.Header.Get("X-Request-ID") != "trace-123" {
		t.Fatalf("request id: got %q", r.Header.Get("X-Request-ID"))
	}
	// Non-API paths serve the console with a strict CSP.
	r := env.newClient().must(200, "GET", "/reset-password", nil)
	if r.Header.Get("Content-Security-Policy") == "" {
		t.Fatal("console without CSP")
	}
}
