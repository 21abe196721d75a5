package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/opsagent/opsagent/server/sandbox"
)

// hostSandbox is the profile a command runs under on this host: the
// server's, narrowed by the host's own (--sandbox-profile), with this
// kernel's Landlock version and a private temp dir removed afterwards.
// The host always has the last word: its profile can only take away.
func (c Config) hostSandbox(fromServer *sandbox.Profile) (sandbox.Profile, func(), error) {
	p := sandbox.Profile{DenyHostStop: true}
	if fromServer != nil {
		p = *fromServer
	}
	p.LandlockABI = hostKernel(c).LandlockABI
	if c.HostSandbox != nil {
		h := *c.HostSandbox
		h.LandlockABI = p.LandlockABI
		p = p.Narrow(h)
	}
	base := c.WorkDir
	if base == "" {
		base = os.TempDir()
	}
	tmp, remove, err := sandbox.TempDir(base)
	if err != nil {
		return p, nil, err
	}
	p.TempDir = tmp
	return p, remove, nil
}

// loadHostSandbox reads a --sandbox-profile file (the profile's JSON).
func loadHostSandbox(path string) (*sandbox.Profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := sandbox.Decode(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	// A relative path would silently grant nothing (or depend on where the
	// connector was started): refuse the file instead, at start.
	for field, list := range map[string][]string{"write_paths": p.WritePaths, "deny_write_paths": p.DenyWritePaths} {
		for _, w := range list {
			if !filepath.IsAbs(w) || slices.Contains(strings.Split(w, "/"), "..") {
				return nil, fmt.Errorf("%s: %s: %q is not an absolute path without '..'", path, field, w)
			}
		}
	}
	return &p, nil
}

// tailBuffer keeps the last max bytes written (the output the sandbox's
// refusals are read from).
type tailBuffer struct {
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }

// hostKernel is what this host reports in its hello.
func hostKernel(c Config) *sandbox.Kernel {
	k := sandbox.Probe().WithoutLandlock(c.NoLandlock)
	return &k
}
