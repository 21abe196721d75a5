package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"sync"
)

// Cmd is a command that runs under a profile. It is built as the
// launcher's command (the binary re-executed as `sandbox-exec`), so it is
// guarded however it is started; Start, Run, Output and CombinedOutput
// save starting the whole binary again where they can: a profile that can
// be applied to a thread of this process is (see startInProcess), and one
// that needs the private mount namespace is applied to a thread of the
// helper, which sits in that namespace (see startViaHelper). As with
// exec.Cmd, a started command must be waited for (Wait, or Run and the
// Output methods): that also ends the thread it was started from.
type Cmd struct {
	*exec.Cmd
	profile Profile
	name    string
	args    []string
	// release lets the restricted thread a command was started from end,
	// once the command has been waited for (see startInProcess).
	release     chan struct{}
	releaseOnce sync.Once
	// ctx is Command's; helped is set when the helper started the command
	// (startViaHelper), which Wait then waits for itself.
	ctx    context.Context
	helped *helped
}

// Start starts the command under its profile.
func (c *Cmd) Start() error {
	if ok, err := c.startInProcess(); ok {
		return err
	}
	if ok, err := c.startViaHelper(); ok {
		return err
	}
	return c.Cmd.Start()
}

// Wait waits for the command to exit, as exec.Cmd.Wait does.
func (c *Cmd) Wait() error {
	if c.helped != nil {
		return c.waitHelped()
	}
	err := c.Cmd.Wait()
	c.releaseThread()
	return err
}

func (c *Cmd) releaseThread() {
	c.releaseOnce.Do(func() {
		if c.release != nil {
			close(c.release)
		}
	})
}

// Run starts the command and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// Output runs the command and returns its standard output.
func (c *Cmd) Output() ([]byte, error) {
	if c.Stdout != nil {
		return nil, errors.New("exec: Stdout already set")
	}
	var out, stderr bytes.Buffer
	c.Stdout = &out
	captureErr := c.Stderr == nil
	if captureErr {
		c.Stderr = &stderr
	}
	err := c.Run()
	var ee *exec.ExitError
	if captureErr && errors.As(err, &ee) {
		ee.Stderr = stderr.Bytes()
	}
	return out.Bytes(), err
}

// CombinedOutput runs the command and returns its standard output and
// standard error together.
func (c *Cmd) CombinedOutput() ([]byte, error) {
	if c.Stdout != nil || c.Stderr != nil {
		return nil, errors.New("exec: Stdout or Stderr already set")
	}
	var b bytes.Buffer
	c.Stdout, c.Stderr = &b, &b
	err := c.Run()
	return b.Bytes(), err
}
