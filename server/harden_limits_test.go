package server_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server"
)

// want429 fails unless r is a 429 with a positive Retry-After.
func want429(t *testing.T, what string, r *resp) {
	t.Helper()
	if n, err := strconv.Atoi(r.Header.Get("Retry-After")); r.Status != 429 || err != nil || n < 1 {
		t.Fatalf("%s: got %d with Retry-After %q, want 429 with a positive Retry-After", what, r.Status, r.Header.Get("Retry-After"))
	}
}

// Chat turns and resumes share one per-caller limit; past it the request
// is refused before a session is created or a model called.
func TestChatAndResumeAreRateLimited(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup, func(c *server.Config) { c.AgentTurnsPerMinute = 3 })
	env.UseClock()
	c := env.register("oncall@example.com")
	withProject(t, env, c)
	var sid string
	for i := 0; i < 3; i++ {
		r := c.do("POST", "/api/chat", map[string]any{"message": "hello"})
		if r.Status != 200 {
			t.Fatalf("chat %d: got %d %s, want 200", i, r.Status, r.Body)
		}
		sid = r.Header.Get("X-Session-ID")
	}
	before := len(c.must(200, "GET", "/api/sessions", nil).List())
	want429(t, "fourth chat in a minute", c.do("POST", "/api/chat", map[string]any{"message": "hello"}))
	want429(t, "resume over the same limit", c.do("POST", "/api/sessions/"+sid+"/resume", map[string]any{"prompt": "again"}))
	if after := len(c.must(200, "GET", "/api/sessions", nil).List()); after != before {
		t.Fatalf("a refused chat created a session: %d sessions, want %d", after, before)
	}
	other := env.register("other@example.com") // another caller has a budget of their own
	withProject(t, env, other)
	if r := other.do("POST", "/api/chat", map[string]any{"message": "hello"}); r.Status != 200 {
		t.Fatalf("another user's chat: got %d, want 200", r.Status)
	}
	env.Advance(2 * time.Minute)
	c.refresh()
	if r := c.do("POST", "/api/sessions/"+sid+"/resume", map[string]any{"prompt": "again"}); r.Status == 429 {
		t.Fatalf("resume after the window: got 429")
	}
}

// An organization's knowledge syncs are limited per minute.
func TestKnowledgeSyncIsRateLimited(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := env.register("owner@example.com")
	withProject(t, env, c)
	c.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": "a.md", "content": "# A\n\ntext\n"})
	for i := 0; i < server.KnowledgeSyncsPerMinute; i++ {
		c.must(204, "POST", "/api/knowledge/sync", nil)
	}
	want429(t, "sync past the limit", c.do("POST", "/api/knowledge/sync", nil))
}

// Keys that match nothing are counted per address; past the limit even a
// well-formed key is refused before it is looked up, until the window passes.
func TestUnknownAPIKeyPrefixesAreRateLimited(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.UseClock()
	owner := env.register("owner@example.com")
	good, _ := env.apiKey(t, owner, map[string]any{"name": "ci", "scopes": []string{"*"}})
	good.must(200, "GET", "/api/auth/me", nil)
	mole := env.newClient()
	for i := 0; i < server.APIKeyMissesPer5Min; i++ {
		mole.Token = "opsk_" + strconv.FormatInt(int64(0xa00000000000+i), 16) + "_" + "guessguessguessguessguessguessguessguessgue"
		if r := mole.do("GET", "/api/auth/me", nil); r.Status != 401 {
			t.Fatalf("guess %d: got %d, want 401", i, r.Status)
		}
	}
	want429(t, "guess past the limit", mole.do("GET", "/api/auth/me", nil))
	want429(t, "a real key from the guessing address", good.do("GET", "/api/auth/me", nil))
	env.Advance(11 * time.Minute)
	good.must(200, "GET", "/api/auth/me", nil)
}
