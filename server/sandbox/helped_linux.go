package sandbox

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/opsagent/opsagent/server/sandbox/confine"
)

// helped is a command the helper started (see helper_linux.go): this
// process is its parent, and Wait does here what exec.Cmd does for the
// commands it starts itself: the copying of non-file stdio, the context's
// kill, WaitDelay.
type helped struct {
	copies    []func() error // started once the command runs
	copyErr   chan error
	parentEnd []*os.File // closed after Wait, or when WaitDelay runs out
	childEnd  []*os.File // closed once the command has them
	exited    chan struct{}
}

// startViaHelper starts the command through the helper when its profile
// needs the private mount namespace (the launcher's SysProcAttr has
// Cloneflags). It declines (false) when the helper cannot serve it: the
// launcher then starts it, as before.
func (c *Cmd) startViaHelper() (bool, error) {
	attr := c.Cmd.SysProcAttr
	if attr == nil || attr.Cloneflags == 0 || c.Cmd.Process != nil || len(c.Cmd.ExtraFiles) > 0 || c.Cmd.Err != nil {
		return false, nil
	}
	if c.ctx != nil {
		if err := c.ctx.Err(); err != nil {
			return true, err
		}
	}
	env := c.Cmd.Env
	if env == nil {
		env = os.Environ()
	}
	h := &helped{exited: make(chan struct{})}
	stdio, err := h.stdio(c.Cmd)
	if err != nil {
		h.closeAll()
		return true, err
	}
	req := confine.HelperRequest{Dir: c.Cmd.Dir, Words: c.profile.launcherWords(), Argv: append([]string{c.name}, c.args...), Env: env}
	pid, started, err := helperStart(c.Cmd.Path, attr, req, [3]int{int(stdio[0].Fd()), int(stdio[1].Fd()), int(stdio[2].Fd())})
	closeFiles(h.childEnd)
	h.childEnd = nil
	if !started || err != nil {
		closeFiles(h.parentEnd)
		if !started {
			return false, nil
		}
		return true, &os.PathError{Op: "fork/exec", Path: c.name, Err: err}
	}
	p, err := os.FindProcess(pid)
	if err != nil { // not on Linux: FindProcess always finds
		return true, err
	}
	c.Cmd.Process, c.helped = p, h
	h.copyErr = make(chan error, len(h.copies))
	for _, f := range h.copies {
		go func() { h.copyErr <- f() }()
	}
	if c.ctx != nil && c.ctx.Done() != nil {
		go func() {
			select {
			case <-c.ctx.Done():
				if c.Cmd.Cancel != nil {
					_ = c.Cmd.Cancel()
				}
			case <-h.exited:
			}
		}()
	}
	return true, nil
}

// stdio is the command's three standard files, as exec.Cmd makes them:
// /dev/null for nil, an *os.File as it is, a pipe copied from or to
// anything else (one pipe when Stdout and Stderr are the same writer).
func (h *helped) stdio(cmd *exec.Cmd) ([3]*os.File, error) {
	var files [3]*os.File
	var err error
	if files[0], err = h.input(cmd.Stdin); err != nil {
		return files, err
	}
	if files[1], err = h.output(cmd.Stdout); err != nil {
		return files, err
	}
	if sameWriter(cmd.Stdout, cmd.Stderr) {
		files[2] = files[1]
	} else if files[2], err = h.output(cmd.Stderr); err != nil {
		return files, err
	}
	return files, nil
}

func (h *helped) input(r io.Reader) (*os.File, error) {
	switch r := r.(type) {
	case nil:
		f, err := os.Open(os.DevNull)
		if err == nil {
			h.childEnd = append(h.childEnd, f)
		}
		return f, err
	case *os.File:
		return r, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	h.childEnd, h.parentEnd = append(h.childEnd, pr), append(h.parentEnd, pw)
	h.copies = append(h.copies, func() error {
		_, err := io.Copy(pw, r)
		if cerr := pw.Close(); err == nil && !errors.Is(cerr, os.ErrClosed) {
			err = cerr
		}
		if errors.Is(err, os.ErrClosed) || isBrokenPipe(err) {
			err = nil // the command need not read all its input
		}
		return err
	})
	return pr, nil
}

func (h *helped) output(w io.Writer) (*os.File, error) {
	switch w := w.(type) {
	case nil:
		f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err == nil {
			h.childEnd = append(h.childEnd, f)
		}
		return f, err
	case *os.File:
		return w, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	h.childEnd, h.parentEnd = append(h.childEnd, pw), append(h.parentEnd, pr)
	h.copies = append(h.copies, func() error {
		_, err := io.Copy(w, pr)
		pr.Close()
		return err
	})
	return pw, nil
}

// sameWriter is exec.Cmd's test for one pipe serving both outputs.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() { _ = recover() }() // writers that cannot be compared are not the same
	return a != nil && a == b
}

func (h *helped) closeAll() {
	closeFiles(h.childEnd)
	closeFiles(h.parentEnd)
}

func closeFiles(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// waitHelped is Wait for a command the helper started.
func (c *Cmd) waitHelped() error {
	h := c.helped
	if c.Cmd.ProcessState != nil {
		return errors.New("exec: Wait was already called")
	}
	state, err := c.Cmd.Process.Wait()
	close(h.exited)
	helperDone(c.Cmd.Process.Pid)
	if err == nil && !state.Success() {
		err = &exec.ExitError{ProcessState: state}
	}
	c.Cmd.ProcessState = state
	if ioErr := h.awaitCopies(c.Cmd.WaitDelay); err == nil {
		err = ioErr
	}
	closeFiles(h.parentEnd)
	return err
}

// awaitCopies waits for the stdio copies to finish, as exec.Cmd does: for
// good without a WaitDelay, else for that long, after which the pipes are
// closed under them (a background child may hold them open) and the
// answer is exec.ErrWaitDelay.
func (h *helped) awaitCopies(delay time.Duration) error {
	var timeout <-chan time.Time
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		timeout = t.C
	}
	var first error
	for range h.copies {
		select {
		case err := <-h.copyErr:
			if first == nil {
				first = err
			}
		case <-timeout:
			closeFiles(h.parentEnd)
			return exec.ErrWaitDelay
		}
	}
	return first
}

func isBrokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }
