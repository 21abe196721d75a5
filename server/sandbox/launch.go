package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/opsagent/opsagent/server/sandbox/confine"
)

// LauncherArg is the hidden subcommand the binary re-executes itself with:
// `opsagent sandbox-exec PROFILE-WORD... -- PROGRAM ARGS...`.
const LauncherArg = confine.Arg

// launcherReady is set by Init: Command runs only in a binary that says
// it is the launcher, rather than re-running one blindly.
var launcherReady bool

// Init must be called by main (and by the TestMain of any test binary
// that runs commands) before Command. The launcher itself is not here: a
// process started as `BINARY sandbox-exec ...` was already turned into
// the command by package confine's init, before the rest of the binary
// was initialised (that is what keeps a sandboxed start cheap).
func Init() {
	launcherReady = true
	if len(os.Args) > 1 && os.Args[1] == LauncherArg {
		os.Exit(confine.Main(os.Args[2:])) // only reached if confine's init did not run first
	}
}

// ErrNoLauncher: this binary cannot start sandboxed commands.
var ErrNoLauncher = errors.New("the sandbox launcher is not installed in this binary (sandbox.Init was not called); the command did not run")

// Command is exec.CommandContext for name and args, run under p: the
// binary itself is started as the launcher, which applies p and then
// execs name, or, where p allows, name is started from a thread of this
// process that p was applied to (Cmd.Start). Stdout, stderr, Dir, Env and
// WaitDelay are the caller's to set as with any exec.Cmd.
func Command(ctx context.Context, p Profile, name string, args ...string) (*Cmd, error) {
	if !launcherReady {
		return nil, ErrNoLauncher
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: the launcher cannot be found: %v", err)
	}
	cmd := exec.CommandContext(ctx, self, p.launcherArgs(name, args...)...)
	cmd.SysProcAttr = sysProcAttr(p)
	cmd.Cancel = func() error { return killGroup(cmd) }
	return &Cmd{Cmd: cmd, profile: p, name: name, args: args, ctx: ctx}, nil
}

// launcherArgs are the arguments the binary is started with to run name
// under p: `sandbox-exec PROFILE-WORD... -- NAME ARGS...`.
func (p Profile) launcherArgs(name string, args ...string) []string {
	argv := append(append([]string{LauncherArg}, p.launcherWords()...), "--", name)
	return append(argv, args...)
}
