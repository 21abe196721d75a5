package tools

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/opsagent/opsagent/server/sandbox"
)

// Every command run_command starts goes through the kernel sandbox, with
// the profile the policy built from the call's decision (WithSandbox). A
// call that reaches a tool without one runs under the strictest profile
// that still lets an approved command work: host-changing calls denied.

type sandboxKey struct{}

// WithSandbox sets the profile the call's commands run under.
func WithSandbox(ctx context.Context, p sandbox.Profile) context.Context {
	return context.WithValue(ctx, sandboxKey{}, p)
}

// SandboxOf is the call's profile (host-changing calls denied by default).
func SandboxOf(ctx context.Context) sandbox.Profile {
	if p, ok := ctx.Value(sandboxKey{}).(sandbox.Profile); ok {
		return p
	}
	return sandbox.Profile{DenyHostStop: true}
}

// localSandbox prepares a profile for this host: its own Landlock version
// and a private temporary directory under the working directory, which
// the caller removes when the command ends.
func localSandbox(p sandbox.Profile, k sandbox.Kernel, workDir string) (sandbox.Profile, func(), error) {
	p.LandlockABI = k.LandlockABI
	tmp, remove, err := sandbox.TempDir(workDir)
	if err != nil {
		return p, nil, err
	}
	p.TempDir = tmp
	return p, remove, nil
}

// RefusalNote is the line a result carries when the sandbox refused the
// command something: the model and the session read it.
func RefusalNote(refusals []string) string {
	if len(refusals) == 0 {
		return ""
	}
	return "[sandbox] the sandbox refused: " + strings.Join(refusals, "; ") + "\n"
}

// tmpEnv points TMPDIR at the private temp dir.
func tmpEnv(env []string, dir string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, "TMPDIR=") {
			out = append(out, e)
		}
	}
	return append(out, "TMPDIR="+filepath.Clean(dir))
}
