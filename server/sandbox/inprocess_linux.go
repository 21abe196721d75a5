package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"github.com/opsagent/opsagent/server/sandbox/confine"
)

// startInProcess starts the program directly, without the launcher, when
// the profile needs nothing a thread of this process cannot take on:
// no_new_privs, the Landlock domain and the seccomp filter are per
// thread, and a process forked from a thread starts with that thread's.
// So a fresh goroutine locks itself to its own OS thread, restricts that
// thread, starts the program from it (Go forks from the calling thread)
// and, once the command has been waited for, returns without unlocking:
// the runtime then ends the thread with the goroutine, and nothing else
// ever runs on it. (Go starts new threads from a locked one through its
// template thread, never by cloning it.) The thread lives as long as the
// command because it is the command's parent: a program that asked for a
// signal when its parent dies (PR_SET_PDEATHSIG) would get it the moment
// the thread ended.
//
// It declines (false), leaving the launcher to do it, when the profile
// hides the system sockets in a mount namespace of its own (that takes
// mounts between fork and exec), when the program is not an absolute
// path (the launcher looks it up in the command's own PATH), and when this
// process is PID 1 (the signal rules refuse signals to PID 1, and the Go
// runtime signals its own threads).
func (c *Cmd) startInProcess() (bool, error) {
	if c.Cmd.SysProcAttr != nil && c.Cmd.SysProcAttr.Cloneflags != 0 || !strings.HasPrefix(c.name, "/") || os.Getpid() == 1 {
		return false, nil
	}
	spec, err := c.profile.spec()
	if err != nil {
		return true, fmt.Errorf("the sandbox profile cannot be applied (%v); the command did not run", err)
	}
	primePidfd.Do(func() {
		// os checks once whether pidfds work by sending itself signal 0
		// through one; done on a restricted thread, the seccomp filter's
		// refusal would turn pidfds off for the whole process.
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			_ = p.Release()
		}
	})
	c.Cmd.Path, c.Cmd.Args, c.Cmd.Err = c.name, append([]string{c.name}, c.args...), nil
	done := make(chan error, 1)
	c.release = make(chan struct{})
	go startConfined(spec, c.Cmd, done, c.release)
	err = <-done
	if err != nil {
		c.releaseThread() // nothing started: nothing to wait for
	}
	return true, err
}

// startConfined runs on a fresh goroutine: it locks its thread, applies
// spec to it, starts cmd from it, waits for release and returns without
// unlocking, so the thread ends with it. The main thread cannot end (the
// runtime parks it for good instead, and /proc/PID/status would show its
// restrictions as the whole process's), so on the main thread it holds
// that thread, leaving the work to another goroutine that cannot land on
// it, and lets it go untouched afterwards.
func startConfined(spec confine.Spec, cmd *exec.Cmd, done chan<- error, release <-chan struct{}) {
	runtime.LockOSThread()
	if syscall.Gettid() == os.Getpid() {
		inner := make(chan error, 1)
		go startConfined(spec, cmd, inner, release)
		done <- <-inner
		runtime.UnlockOSThread()
		return
	}
	// From here on this thread is never unlocked.
	if err := confine.Apply(spec); err != nil {
		done <- fmt.Errorf("the sandbox could not be applied (%v); the command did not run", err)
		return
	}
	done <- cmd.Start()
	<-release
}

var primePidfd sync.Once
