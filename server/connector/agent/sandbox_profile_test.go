package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A host's --sandbox-profile with a relative or ".." path is refused when
// the connector starts, instead of silently granting nothing.
func TestHostSandboxProfileRefusesRelativePaths(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		`{"write_paths": ["/srv/app"]}`:        "",
		`{"write_paths": ["srv/app"]}`:         `write_paths: "srv/app" is not an absolute path`,
		`{"write_paths": ["/srv/../etc"]}`:     `write_paths: "/srv/../etc" is not an absolute path`,
		`{"deny_write_paths": ["etc"]}`:        `deny_write_paths: "etc" is not an absolute path`,
		`{"write_paths": ["/srv"], "x": true}`: `unknown field "x"`,
	} {
		f := filepath.Join(dir, "p.json")
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		p, err := loadHostSandbox(f)
		switch {
		case want == "" && (err != nil || p.WritePaths[0] != "/srv/app"):
			t.Errorf("%s: %v %v", body, p, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: got %v, want an error with %q", body, err, want)
		}
	}
}
