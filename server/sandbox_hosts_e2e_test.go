package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server"
)

// Each connector host reports what its kernel offers, enforces the
// profile the server sends, and a host without Landlock (simulated) gets
// no read-only auto-allow: its read-only commands ask a person.
func TestSandboxConnectorHostsReportAndEnforce(t *testing.T) {
	t.Parallel()
	w := newConnWorld(t)
	c := w.c
	fullTok, fullID := w.enroll(c, "full", nil)
	bareTok, bareID := w.enroll(c, "bare", nil)
	full := w.runHost("full", fullTok)
	w.runHost("bare", bareTok, "--sandbox-no-landlock")
	w.waitOnline(c, "full", "bare")

	got := c.must(200, "GET", "/api/connectors/"+fullID, nil).JSON()
	sb, _ := got["sandbox"].(map[string]any)
	if abi, _ := sb["landlock_abi"].(float64); abi < 1 || sb["seccomp"] != true || got["read_only_auto_allow"] != true ||
		!strings.Contains(got["sandbox_note"].(string), "Landlock ABI") {
		t.Fatalf("full host: %v", got)
	}
	got = c.must(200, "GET", "/api/connectors/"+bareID, nil).JSON()
	sb, _ = got["sandbox"].(map[string]any)
	if sb["landlock_abi"] != float64(0) || sb["no_landlock_simulated"] != true || got["read_only_auto_allow"] != false ||
		!strings.Contains(got["sandbox_note"].(string), "ask a person") {
		t.Fatalf("bare host: %v", got)
	}

	// A careless read-only addition lets sort -o run unattended; the host's
	// kernel keeps it read-only and says so.
	c.must(200, "PUT", "/api/command-policy", map[string]any{"auto_allow_read_only": true, "read_only_commands": []string{"sort *"}})
	eval := func(target, line string) map[string]any {
		return c.must(200, "POST", "/api/rules/evaluate", map[string]any{"tool": "run_command",
			"arguments": map[string]any{"command": line, "target": target}}).JSON()
	}
	if v := eval("full", "sort -o marker /etc/hostname"); v["verdict"] != "allow" || v["sandbox"].(map[string]any)["read_only"] != true {
		t.Fatalf("full host, read-only: %v", v)
	}
	if v := eval("bare", "df -h"); v["verdict"] != "need_approval" || !strings.Contains(v["reason"].(string), "the kernel cannot hold it read-only") {
		t.Fatalf("bare host, read-only: %v", v)
	}
	_, evs := w.runCommand(c, map[string]any{"command": "sort -o marker /etc/hostname; echo done", "target": "full"})
	out, data := toolResult(t, evs)
	if data["is_error"] == true || !strings.Contains(out, "[policy] ran without a person") ||
		!strings.Contains(out, "the sandbox refused: write to "+filepath.Join(full.dir, "marker")) || !strings.Contains(out, "done") {
		t.Fatalf("sandboxed run on the host: %v", data)
	}
	if _, err := os.Stat(filepath.Join(full.dir, "marker")); err == nil {
		t.Fatal("the host's sandbox let a read-only command write")
	}
}

// The server host without Landlock (simulated): read-only lines ask a
// person, and the reason says why.
func TestSandboxServerWithoutLandlockAsksForReadOnly(t *testing.T) {
	t.Parallel()
	e := newSandboxE2E(t, func(c *server.Config) { c.SandboxNoLandlock = true })
	e.c.must(200, "PUT", "/api/command-policy", map[string]any{"auto_allow_read_only": true})
	got := e.evaluate(t, "df -h")
	if got["verdict"] != "need_approval" || got["read_only"] != true || !strings.Contains(got["reason"].(string), "simulated with --sandbox-no-landlock") {
		t.Fatalf("df -h without Landlock: %v", got)
	}
	run := e.runCorpus(t, []string{"df -h"}, false)
	if len(run.reached) != 1 || !strings.Contains(run.results[0].Data["output"].(string), "exit code 0") {
		t.Fatalf("the read-only line was not asked for and run: %+v", run)
	}
	// With Landlock the same server would have let it run unattended.
	e2 := newSandboxE2E(t)
	e2.c.must(200, "PUT", "/api/command-policy", map[string]any{"auto_allow_read_only": true})
	if got := e2.evaluate(t, "df -h"); got["verdict"] != "allow" {
		t.Fatalf("df -h with Landlock: %v", got)
	}
}
