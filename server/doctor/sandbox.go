package doctor

import (
	"context"
	"fmt"
	"time"

	"github.com/opsagent/opsagent/server/sandbox"
)

// checkSandbox reports what this host's kernel offers the command sandbox
// and proves the launcher works: a read-only `true` runs under it.
func (d *doctorRun) checkSandbox(ctx context.Context) {
	k := sandbox.Probe().WithoutLandlock(d.cfg.SandboxNoLandlock)
	msg := fmt.Sprintf("Landlock ABI %d, seccomp %v, user namespaces %v: %s", k.LandlockABI, k.Seccomp, k.UserNamespaces, k.Explain())
	switch {
	case !k.Seccomp:
		d.fail("sandbox", msg, "run on a kernel with seccomp (CONFIG_SECCOMP_FILTER): without it host-changing calls cannot be denied")
		return
	case !k.ReadOnlyEnforced():
		d.warn("sandbox", msg, "use a kernel with Landlock (5.13+, lsm=landlock) so read-only commands can run without a person")
	default:
		d.ok("sandbox", msg)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// The profile a read-only line gets: through the helper where the host
	// lets us make a private mount namespace.
	cmd, err := sandbox.Command(cctx, sandbox.Profile{ReadOnly: true, DenyHostStop: true, ScopeSignals: true, HideSystemSockets: true,
		LandlockABI: k.LandlockABI}, "/bin/true")
	if err == nil {
		var out []byte
		if out, err = cmd.CombinedOutput(); err != nil {
			err = fmt.Errorf("%v: %s", err, out)
		}
	}
	if err != nil {
		d.fail("sandbox_launcher", "a sandboxed command could not run: "+err.Error(), "check that the opsagent binary can re-execute itself (sandbox-helper, sandbox-exec)")
		return
	}
	if !sandbox.PrivateMountNamespace() {
		d.warn("sandbox_launcher", "commands start under the sandbox, but this host forbids new namespaces, so the system D-Bus and systemd's sockets stay visible to read-only and must_never lines",
			"allow user namespaces (or CAP_SYS_ADMIN for a root server; a systemd unit without RestrictNamespaces=) to hide them; seccomp and Landlock hold either way")
		return
	}
	d.ok("sandbox_launcher", "commands start under the sandbox; read-only and must_never lines start in a private mount namespace that hides the system sockets (opsagent sandbox-helper)")
}
