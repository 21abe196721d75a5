package server_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The install command the API hands out starts the connector with a host
// allow-list, as the README does: pasted as it is, without the file, the
// connector refuses to start instead of running every approved command.
func TestConnectorInstallCommandNamesAHostAllowList(t *testing.T) {
	w := newConnWorld(t)
	r := w.c.must(201, "POST", "/api/connectors", map[string]any{"name": "db-9"}).JSON()
	install, _ := r["install_command"].(string)
	if !strings.Contains(install, " --allow /etc/opsagent/allow") || !strings.HasPrefix(install, "OPSAGENT_CONNECTOR_TOKEN="+r["token"].(string)+" ") ||
		!strings.Contains(install, "opsagent connector --server http://"+w.addr) {
		t.Fatalf("install_command: %q", install)
	}
	if _, err := os.Stat("/etc/opsagent/allow"); err == nil {
		t.Skip("this machine has /etc/opsagent/allow: the command would really start a connector")
	}
	// Run it as a person pastes it, with the binary on the PATH.
	binDir := t.TempDir()
	if err := os.Symlink(w.bin, filepath.Join(binDir, "opsagent")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", install)
	cmd.Env = []string{"PATH=" + binDir + ":/usr/bin:/bin", "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "allow-list") || !strings.Contains(string(out), "/etc/opsagent/allow") {
		t.Fatalf("the pasted command without an allow-list file: %v\n%s", err, out)
	}
}

// A server stopped while a connector is attached saves its last-seen time
// before the database closes (it said "database is closed" before).
func TestShutdownWithAConnectorAttachedSavesLastSeen(t *testing.T) {
	w := newConnWorld(t)
	tok, _ := w.enroll(w.c, "db-8", nil)
	w.runHost("db-8", tok)
	w.waitOnline(w.c, "db-8")
	w.stop()
	logs := w.logs.String()
	if strings.Contains(logs, "last-seen times not saved") || strings.Contains(logs, "database is closed") {
		t.Fatalf("shutdown with a connector attached:\n%s", logs)
	}
	if !strings.Contains(logs, "shutting down") {
		t.Fatalf("the server did not shut down cleanly:\n%s", logs)
	}
}
