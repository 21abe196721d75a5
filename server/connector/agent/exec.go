package agent

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/opsagent/opsagent/server/connector"
	"github.com/opsagent/opsagent/server/sandbox"
)

// minimalPath is the PATH a command gets; the rest of the connector's
// environment (its token among it) never reaches a command.
const minimalPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// execute runs one command and reports it: refused by the host's
// allow-list (it does not run), or its streamed output, exit code,
// duration and whether the timeout killed it.
func (s *sess) execute(ctx context.Context, callID string, run connector.Run) {
	log := s.cfg.Logger.With("call_id", callID)
	report := func(r connector.Result) {
		if err := s.send(context.Background(), &connector.Frame{Type: connector.TypeResult, CallID: callID, Result: &r}); err != nil {
			log.Warn("connector: result not delivered", "err", err)
		}
	}
	if !s.cfg.Allow.Allows(run.Command) {
		log.Warn("connector: command refused by the host allow-list", "command", run.Command, "file", s.cfg.AllowPath)
		report(connector.Result{ExitCode: -1, Refused: "the host's own allow-list (" + s.cfg.AllowPath + ") does not allow this " +
			"command, so the host refused it and it did not run. The host's administrator decides what runs there; do not try " +
			"to reach the same effect another way."})
		return
	}
	timeout := time.Duration(run.TimeoutMS) * time.Millisecond
	if timeout <= 0 {
		timeout = time.Minute
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	prof, cleanup, err := s.cfg.hostSandbox(run.Sandbox)
	if err != nil {
		report(connector.Result{ExitCode: -1, Error: "the sandbox could not be prepared (" + err.Error() + "); the command did not run"})
		return
	}
	defer cleanup()
	cmd, err := sandbox.Command(tctx, prof, "/bin/sh", "-c", run.Command)
	if err != nil {
		report(connector.Result{ExitCode: -1, Error: err.Error()})
		return
	}
	cmd.Dir = s.cfg.WorkDir
	home, _ := os.UserHomeDir()
	cmd.Env = []string{"PATH=" + minimalPath, "HOME=" + home, "LANG=C.UTF-8", "TMPDIR=" + prof.TempDir}
	for k, v := range run.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.WaitDelay = 2 * time.Second
	pr, pw, err := os.Pipe()
	if err != nil {
		report(connector.Result{ExitCode: -1, Error: "could not start the command: " + err.Error()})
		return
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	log.Info("connector: running", "command", run.Command, "timeout", timeout)
	started := time.Now()
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		report(connector.Result{ExitCode: -1, Error: "could not start the command: " + err.Error()})
		return
	}
	pw.Close() // the children hold the write end now
	streamed := make(chan bool, 1)
	tail := &tailBuffer{max: 64 << 10}
	go func() { streamed <- s.stream(ctx, callID, io.TeeReader(pr, tail), run.MaxOutput) }()
	waitErr := cmd.Wait()
	// A background child may hold the pipe after the shell exits: its
	// output is read for a moment more, then the pipe is closed under it.
	var truncated bool
	select {
	case truncated = <-streamed:
	case <-time.After(2 * time.Second):
		pr.Close()
		truncated = <-streamed
	}
	pr.Close()
	took := time.Since(started)
	res := connector.Result{ExitCode: 0, DurationMS: took.Milliseconds(), DurationUS: took.Microseconds(), Truncated: truncated}
	var exit *exec.ExitError
	switch {
	case tctx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
		res.TimedOut, res.ExitCode = true, -1
	case ctx.Err() != nil:
		res.ExitCode, res.Error = -1, "cancelled: the command was killed"
	case waitErr == nil:
	case errors.As(waitErr, &exit):
		res.ExitCode = exit.ExitCode()
	default:
		res.ExitCode, res.Error = -1, waitErr.Error()
	}
	res.SandboxRefused = prof.Refusals(tail.String(), s.cfg.WorkDir)
	log.Info("connector: finished", "exit_code", res.ExitCode, "timed_out", res.TimedOut, "duration_ms", res.DurationMS)
	report(res)
}

// stream sends the output as it comes, in chunks of at most ChunkSize cut
// on character boundaries (connector.OutputFrame).
// Writes to the socket block when the server reads slowly, and the pipe
// then fills and the command waits: nothing piles up in memory here.
// Past max bytes the rest is read and dropped; it reports that.
func (s *sess) stream(ctx context.Context, callID string, r io.Reader, max int64) bool {
	buf := make([]byte, connector.ChunkSize)
	var sent int64
	truncated := false
	held := 0 // the start of a character the last read split, at buf's start
	for {
		n, err := r.Read(buf[held:])
		n += held
		chunk := buf[:n]
		if err == nil {
			chunk = chunk[:connector.CompleteUTF8(chunk)]
		}
		next := buf[len(chunk):n]
		if len(chunk) > 0 {
			if max > 0 && sent+int64(len(chunk)) > max {
				chunk = chunk[:max-sent]
				truncated, next = true, nil
			}
			if len(chunk) > 0 {
				sent += int64(len(chunk))
				if werr := s.send(ctx, connector.OutputFrame(callID, chunk)); werr != nil {
					_, _ = io.Copy(io.Discard, r)
					return truncated
				}
			}
		}
		held = copy(buf, next)
		if err != nil {
			return truncated
		}
	}
}
