package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The project's sandbox profile goes to every connector host, and a host's
// own --sandbox-profile narrows it: the intersection runs, the host has
// the last word, and GET /api/connectors/{id} shows the host's profile.
func TestSandboxProfileConnectorHostNarrowsTheProjects(t *testing.T) {
	t.Parallel()
	w := newConnWorld(t)
	c := w.c
	plainTok, plainID := w.enroll(c, "plain", nil)
	narrowTok, narrowID := w.enroll(c, "narrow", nil)
	plainDir, narrowDir := filepath.Join(t.TempDir(), "plain"), filepath.Join(t.TempDir(), "narrow")
	for _, d := range []string{filepath.Join(plainDir, "wide"), filepath.Join(narrowDir, "wide", "inner")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hostFile := filepath.Join(t.TempDir(), "host-profile.json")
	write(t, hostFile, `{"write_paths": ["`+filepath.Join(narrowDir, "wide", "inner")+`"]}`)
	w.startHost("plain", plainDir, plainTok)
	w.startHost("narrow", narrowDir, narrowTok, "--sandbox-profile", hostFile)
	w.waitOnline(c, "plain", "narrow")

	c.must(200, "PUT", "/api/sandbox-profile", map[string]any{"allow_paths": []string{filepath.Join(plainDir, "wide"), filepath.Join(narrowDir, "wide")}})
	c.must(201, "POST", "/api/rules", map[string]any{"kind": "must_always", "effect": "allow", "description": "touching files is fine here",
		"tool": "run_command", "match_type": "glob", "pattern": "touch *"})

	got := c.must(200, "GET", "/api/connectors/"+narrowID, nil).JSON()
	if hp, _ := got["host_sandbox_profile"].(map[string]any); hp == nil || hp["write_paths"].([]any)[0] != filepath.Join(narrowDir, "wide", "inner") {
		t.Fatalf("the narrow host's profile is not shown: %v", got)
	} else if got["host_sandbox_summary"] != "writes only under "+filepath.Join(narrowDir, "wide", "inner") {
		t.Fatalf("the narrow host's profile in words: %v", got["host_sandbox_summary"])
	}
	if got := c.must(200, "GET", "/api/connectors/"+plainID, nil).JSON(); got["host_sandbox_profile"] != nil {
		t.Fatalf("the plain host shows a profile it does not have: %v", got)
	}

	// The Connectors page says what the narrow host's own profile takes away, and nothing for the plain one.
	ctx, cancel := browser(t)
	defer cancel()
	signIn(t, ctx, w.env.URL, "ops@example.com")
	clickNav(t, ctx, "/settings")
	if err := chromedp.Do(ctx, click(`#tab-connectors`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the narrow host's profile", textHas(`tr[data-connector-id="`+narrowID+`"] .host-profile`,
		"Host profile: writes only under "+filepath.Join(narrowDir, "wide", "inner")))
	plainShows, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.querySelector('tr[data-connector-id="`+plainID+`"] .host-profile')`))
	if err != nil || plainShows {
		t.Fatalf("the plain host shows a host profile (%v)", err)
	}

	// The project's profile alone: writes beneath wide/, nowhere else.
	_, evs := w.runCommand(c, map[string]any{"command": "touch wide/ok out", "target": "plain"})
	out, _ := toolResult(t, evs)
	if !strings.Contains(out, "the sandbox refused: write to "+filepath.Join(plainDir, "out")) {
		t.Fatalf("plain host: %s", out)
	}
	if !lexists(filepath.Join(plainDir, "wide", "ok")) || lexists(filepath.Join(plainDir, "out")) {
		t.Fatalf("plain host: the project's allow-paths did not hold: %s", out)
	}

	// The host narrows it to wide/inner: the project's wide/ is not enough there.
	_, evs = w.runCommand(c, map[string]any{"command": "touch wide/inner/ok wide/no", "target": "narrow"})
	out, _ = toolResult(t, evs)
	if !strings.Contains(out, "the sandbox refused: write to "+filepath.Join(narrowDir, "wide", "no")) {
		t.Fatalf("narrow host: %s", out)
	}
	if !lexists(filepath.Join(narrowDir, "wide", "inner", "ok")) || lexists(filepath.Join(narrowDir, "wide", "no")) {
		t.Fatalf("narrow host: the host's narrower profile did not win: %s", out)
	}
}
