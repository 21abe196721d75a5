package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// LauncherArg is the hidden subcommand the binary re-executes itself with:
// `opsagent sandbox-exec PROFILE -- PROGRAM ARGS...`.
const LauncherArg = "sandbox-exec"

// launcherReady is set by Init: a binary that never called it cannot act
// as the launcher, and Command refuses rather than re-running it blindly.
var launcherReady bool

// Init must be the first thing main (and the TestMain of any test binary
// that runs commands) does: when the process was started as the launcher
// it applies the profile and execs the command, and never returns.
func Init() {
	launcherReady = true
	if len(os.Args) > 1 && os.Args[1] == LauncherArg {
		os.Exit(launcherMain(os.Args[2:]))
	}
}

// ErrNoLauncher: this binary cannot start sandboxed commands.
var ErrNoLauncher = errors.New("the sandbox launcher is not installed in this binary (sandbox.Init was not called); the command did not run")

// Command is exec.CommandContext for name and args, run under p: the
// binary itself is started as the launcher, which applies p and then
// execs name. Stdout, stderr, Dir, Env and SysProcAttr are the caller's to
// set as with any exec.Cmd; the launcher passes them through.
func Command(ctx context.Context, p Profile, name string, args ...string) (*exec.Cmd, error) {
	if !launcherReady {
		return nil, ErrNoLauncher
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: the launcher cannot be found: %v", err)
	}
	argv := append([]string{LauncherArg, p.Encode(), "--", name}, args...)
	cmd := exec.CommandContext(ctx, self, argv...)
	cmd.SysProcAttr = sysProcAttr(p)
	cmd.Cancel = func() error { return killGroup(cmd) }
	return cmd, nil
}

// launcherMain is the launcher: the profile, "--", the program and its
// arguments. Any failure to apply the profile stops here with exit 126:
// nothing runs unguarded.
func launcherMain(args []string) int {
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(os.Stderr, "usage: opsagent sandbox-exec PROFILE -- PROGRAM [ARGS...]")
		return 2
	}
	p, err := Decode(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "opsagent sandbox:", err)
		return 126
	}
	err = applyAndExec(p, args[2], args[3:])
	fmt.Fprintln(os.Stderr, "opsagent sandbox: the command did not run:", err)
	return 126
}
