package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Binary builds the opsagent binary (CGO_ENABLED=0) into the test's temp
// dir and returns its path.
func Binary(tb testing.TB) string {
	tb.Helper()
	bin, err := BuildBinary(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return bin
}

var shared struct {
	once sync.Once
	bin  string
	err  error
}

// SharedBinary builds the opsagent binary once per test process, for the
// tests of a package that all run it; the build stays in the OS temp dir.
func SharedBinary(tb testing.TB) string {
	tb.Helper()
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "opsagent-bin-")
		if err == nil {
			shared.bin, err = BuildBinary(dir)
		}
		shared.err = err
	})
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
	return shared.bin
}

// BuildBinary builds the opsagent binary into dir (for a TestMain that
// shares one build among a package's tests).
func BuildBinary(dir string) (string, error) {
	bin := filepath.Join(dir, "opsagent")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/opsagent/opsagent")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// Process is a running `opsagent serve`.
type Process struct {
	Cmd  *exec.Cmd
	Addr string // host:port it listens on
	URL  string // http://Addr
	Logs *SyncBuffer
	done chan error
}

// StartProcess runs bin with args (a serve command line with --addr) and env
// (nil: the test's environment with OPSAGENT_LOG_LEVEL=info), waits for its
// listening line and stops it (SIGTERM) when the test ends.
func StartProcess(tb testing.TB, bin string, args, env []string) *Process {
	tb.Helper()
	if env == nil {
		env = append(os.Environ(), "OPSAGENT_LOG_LEVEL=info")
	}
	p := &Process{Cmd: exec.Command(bin, args...), Logs: &SyncBuffer{}, done: make(chan error, 1)}
	p.Cmd.Env = env
	p.Cmd.Stdout, p.Cmd.Stderr = p.Logs, p.Logs
	if err := p.Cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() { p.done <- p.Cmd.Wait() }()
	tb.Cleanup(p.Stop)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := Listening.FindStringSubmatch(p.Logs.String()); m != nil {
			p.Addr, p.URL = m[1], "http://"+m[1]
			return p
		}
		select {
		case err := <-p.done:
			p.done <- err
			tb.Fatalf("server exited before listening: %v\n%s", err, p.Logs.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tb.Fatalf("server did not report its address:\n%s", p.Logs.String())
		}
	}
}

// Stop ends the process the way an operator does (SIGTERM, SIGKILL after 30
// s) and waits for it; stopping twice is harmless.
func (p *Process) Stop() {
	if p.Cmd.Process == nil {
		return
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	p.wait(30 * time.Second)
}

// Kill ends the process with SIGKILL (a crash) and waits for it.
func (p *Process) Kill() {
	_ = p.Cmd.Process.Kill()
	p.wait(30 * time.Second)
}

func (p *Process) wait(d time.Duration) {
	select {
	case err := <-p.done:
		p.done <- err // later calls return at once
	case <-time.After(d):
		_ = p.Cmd.Process.Kill()
		p.done <- <-p.done
	}
}
