package sandbox

import (
	"path/filepath"
	"regexp"
	"strings"
)

// Refusals reads a sandboxed command's output for what the kernel refused
// it, and names each one ("write to /etc/x"). Landlock answers EACCES
// ("Permission denied") and seccomp EPERM ("Operation not permitted"); the
// path in a refused line is checked against the profile, so a refusal is
// named only where the profile forbids that access.
func (p Profile) Refusals(output, workDir string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] && len(out) < 10 {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, line := range strings.Split(output, "\n") {
		eacces := strings.Contains(line, "Permission denied")
		eperm := strings.Contains(line, "Operation not permitted")
		if !eacces && !eperm {
			continue
		}
		path := refusedPath(line)
		if path != "" && !filepath.IsAbs(path) {
			path = filepath.Join(workDir, path)
		}
		switch {
		case path != "" && p.LandlockABI > 0 && !p.writable(path):
			add("write to " + path)
		case path != "" && p.LandlockABI > 0 && p.NoDelete && eacces:
			add("delete or truncate " + path)
		case path != "" && p.LandlockABI > 0 && (p.NoExecNew || p.TempDir != "" && within(path, p.TempDir)) && eacces:
			add("execute " + path)
		case eperm && (p.DenyHostStop || p.ReadOnly):
			add("a host-changing system call (" + strings.TrimSpace(clip(line, 160)) + ")")
		case eacces && p.NoNetwork && strings.Contains(line, "connect"):
			add("network access (" + strings.TrimSpace(clip(line, 160)) + ")")
		}
	}
	return out
}

var quoted = regexp.MustCompile("['‘`\"]([^'’`\"]+)['’`\"]")

// refusedPath is the path a tool's error line names: the quoted one
// (GNU tools), else the last word before ": Permission denied" (shells).
func refusedPath(line string) string {
	if m := quoted.FindStringSubmatch(line); m != nil {
		return m[1]
	}
	for _, msg := range []string{": Permission denied", ": Operation not permitted"} {
		if i := strings.Index(line, msg); i > 0 {
			head := line[:i]
			if j := strings.LastIndex(head, ": "); j >= 0 {
				head = head[j+2:]
			}
			f := strings.Fields(head)
			if len(f) == 0 {
				return ""
			}
			return f[len(f)-1]
		}
	}
	return ""
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
