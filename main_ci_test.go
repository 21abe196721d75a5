package main

import (
	"os"
	"strings"
	"testing"
)

// CI's script waits for another apt process (unattended-upgrades on a fresh
// VM holds the dpkg lock for minutes) instead of failing at once, and
// installs what the deployment tests need so they run instead of skipping.
func TestCIScriptWaitsForTheDpkgLockAndInstallsSystemdAnalyze(t *testing.T) {
	b, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	calls := 0
	for _, line := range strings.Split(script, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") || !strings.Contains(line, "apt-get") && !strings.Contains(line, "$APT ") {
			continue
		}
		calls++
		if !strings.Contains(line, "DPkg::Lock::Timeout=600") && !strings.Contains(line, "$APT ") {
			t.Errorf(".ci/run calls apt-get without -o DPkg::Lock::Timeout=600: %s", strings.TrimSpace(line))
		}
	}
	if calls == 0 {
		t.Fatal(".ci/run installs nothing with apt-get")
	}
	if !strings.Contains(script, `command -v systemd-analyze >/dev/null 2>&1 || NEED="$NEED systemd"`) {
		t.Error(".ci/run does not install systemd-analyze (TestSystemdUnitVerifies would skip)")
	}
}
