package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server"
)

// A project's sandbox profile (allow-paths) holds approved commands on the
// server: a write beneath an allowed path succeeds, one outside it is the
// sandbox's refusal and leaves no file; bad lists are 422; another
// project keeps its own profile and another tenant's is 404.
func TestSandboxProfileAllowPathsHoldApprovedCommandsOnTheServer(t *testing.T) {
	t.Parallel()
	e := newSandboxE2E(t)
	c := e.c
	got := c.must(200, "GET", "/api/sandbox-profile", nil).JSON()
	if len(got["allow_paths"].([]any)) != 0 || got["updated_at"] != nil || !strings.Contains(got["summary"].(string), "wherever the host's user may") {
		t.Fatalf("default profile: %v", got)
	}

	for _, bad := range []struct {
		paths []string
		loc   string
	}{
		{[]string{"srv/app"}, "body.allow_paths.0"},
		{[]string{"/srv", "/srv/../etc"}, "body.allow_paths.1"},
		{[]string{""}, "body.allow_paths.0"},
		{[]string{"/srv/" + strings.Repeat("x", 600)}, "body.allow_paths.0"},
		{[]string{"/srv/a\nb"}, "body.allow_paths.0"},
		{make([]string, 33), "body.allow_paths"},
	} {
		r := c.must(422, "PUT", "/api/sandbox-profile", map[string]any{"allow_paths": bad.paths}).JSON()
		if loc := locOf(r); loc != bad.loc {
			t.Errorf("%q: 422 at %s, want %s: %v", bad.paths, loc, bad.loc, r)
		}
	}
	c.must(422, "PUT", "/api/sandbox-profile", `{"allow_paths": "/srv"}`)

	allowed := filepath.Join(e.work, "allowed")
	if err := os.MkdirAll(allowed, 0o700); err != nil {
		t.Fatal(err)
	}
	got = c.must(200, "PUT", "/api/sandbox-profile", map[string]any{"allow_paths": []string{allowed + "/", allowed}}).JSON()
	if ps := got["allow_paths"].([]any); len(ps) != 1 || ps[0] != allowed || got["updated_at"] == nil ||
		!strings.Contains(got["summary"].(string), "only beneath "+allowed) {
		t.Fatalf("saved profile: %v", got)
	}
	if again := c.must(200, "GET", "/api/sandbox-profile", nil).JSON(); again["allow_paths"].([]any)[0] != allowed {
		t.Fatalf("profile not kept: %v", again)
	}
	if ev := c.must(200, "GET", "/api/audit-logs?action=sandbox_profile.updated", nil).JSON(); ev["total"] != float64(1) {
		t.Fatalf("audit of the change: %v", ev)
	}

	// What the approver sees is what runs: the evaluation names the paths.
	sb, _ := e.evaluate(t, "touch allowed/ok")["sandbox"].(map[string]any)
	if wp, _ := sb["write_paths"].([]any); len(wp) != 1 || wp[0] != allowed {
		t.Fatalf("evaluated sandbox: %v", sb)
	}
	run := e.runCorpus(t, []string{"touch allowed/ok; touch outside; echo after"}, false)
	out, _ := run.results[0].Data["output"].(string)
	if run.approved != 1 || !strings.Contains(out, "[policy] ran with a person's approval") || !strings.Contains(out, "after") ||
		!strings.Contains(out, "the sandbox refused: write to "+filepath.Join(e.work, "outside")) {
		t.Fatalf("approved command: %+v\n%s", run, out)
	}
	if !lexists(filepath.Join(allowed, "ok")) {
		t.Errorf("the write beneath the allowed path did not happen: %s", out)
	}
	if lexists(filepath.Join(e.work, "outside")) {
		t.Errorf("ESCAPE: an approved command wrote outside the project's allow-paths: %s", out)
	}

	// Another project of the same org has its own profile (none).
	other := *c
	other.Project = c.must(201, "POST", "/api/projects", map[string]any{"name": "staging"}).JSON()["id"].(string)
	if got := other.must(200, "GET", "/api/sandbox-profile", nil).JSON(); len(got["allow_paths"].([]any)) != 0 {
		t.Fatalf("the other project sees this project's profile: %v", got)
	}
	sb, _ = other.must(200, "POST", "/api/rules/evaluate", map[string]any{"tool": "run_command",
		"arguments": map[string]any{"command": "touch x"}}).JSON()["sandbox"].(map[string]any)
	if _, ok := sb["write_paths"]; ok {
		t.Fatalf("the other project's commands got this project's allow-paths: %v", sb)
	}
	// Members may read it; only admins change it.
	member := e.env.invite(t, c, orgOf(t, c), "member@example.com", "member")
	member.Project = c.Project
	if got := member.must(200, "GET", "/api/sandbox-profile", nil).JSON(); got["allow_paths"].([]any)[0] != allowed {
		t.Fatalf("member reads: %v", got)
	}
	member.must(403, "PUT", "/api/sandbox-profile", map[string]any{"allow_paths": []string{}})

	// Another tenant cannot read or change it: 404, like a project that does not exist.
	stranger := e.env.register("stranger@example.com")
	stranger.Project = c.Project
	stranger.must(404, "GET", "/api/sandbox-profile", nil)
	stranger.must(404, "PUT", "/api/sandbox-profile", map[string]any{"allow_paths": []string{"/"}})
	if got := c.must(200, "GET", "/api/sandbox-profile", nil).JSON(); got["allow_paths"].([]any)[0] != allowed {
		t.Fatalf("a stranger changed the profile: %v", got)
	}
}

// locOf is the first 422 location, dotted ("body.allow_paths.0").
func locOf(r map[string]any) string {
	ds, _ := r["detail"].([]any)
	if len(ds) == 0 {
		return ""
	}
	loc, _ := ds[0].(map[string]any)["loc"].([]any)
	parts := make([]string, len(loc))
	for i, p := range loc {
		parts[i] = fmt.Sprint(p)
	}
	return strings.Join(parts, ".")
}

// On a host without Landlock (simulated) the allow-paths cannot be held:
// the approval card says so rather than letting the list look enforced.
func TestSandboxProfileWithoutLandlockTheCardSaysSo(t *testing.T) {
	t.Parallel()
	e := newSandboxE2E(t, func(c *server.Config) { c.SandboxNoLandlock = true })
	if got := e.evaluate(t, "touch x"); strings.Contains(got["reason"].(string), "allow-paths") {
		t.Fatalf("no allow-paths yet: %v", got)
	}
	e.c.must(200, "PUT", "/api/sandbox-profile", map[string]any{"allow_paths": []string{e.work}})
	got := e.evaluate(t, "touch x")
	if got["verdict"] != "need_approval" || !strings.Contains(got["reason"].(string), "allow-paths cannot be held there") ||
		!strings.Contains(got["reason"].(string), "simulated with --sandbox-no-landlock") {
		t.Fatalf("touch x without Landlock: %v", got)
	}
}
