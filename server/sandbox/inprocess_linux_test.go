package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A profile without a mount namespace is applied to a thread of this
// process and the program started from it; the command is as confined as
// under the launcher, and the restricted thread ends with its goroutine:
// no thread of this process is left under no_new_privs or a filter.
func TestInProcessStartConfinesTheCommandAndLeavesNoConfinedThread(t *testing.T) {
	p := Profile{DenyHostStop: true, ReadOnly: true, LandlockABI: Probe().LandlockABI}
	dir := t.TempDir()
	script := `grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status | tr -s '\t' ' '; echo x > ` + filepath.Join(dir, "marker")
	for i := 0; i < 20; i++ {
		cmd, err := Command(context.Background(), p, "/bin/sh", "-c", script)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := cmd.CombinedOutput()
		if cmd.Path != "/bin/sh" {
			t.Fatalf("started through the launcher (%s), not from a thread of this process", cmd.Path)
		}
		if !strings.Contains(string(out), "NoNewPrivs: 1") || !strings.Contains(string(out), "Seccomp: 2") {
			t.Fatalf("the command is not confined: %s", out)
		}
		if _, err := os.Stat(filepath.Join(dir, "marker")); err == nil {
			t.Fatalf("the read-only profile let the command write: %s", out)
		}
	}
	// The same command through the launcher (the embedded exec.Cmd, which
	// is what anything bypassing Cmd.Start gets) is confined the same way.
	cmd, _ := Command(context.Background(), p, "/bin/sh", "-c", script)
	if out, _ := cmd.Cmd.CombinedOutput(); !strings.Contains(string(out), "NoNewPrivs: 1") || !strings.Contains(string(out), "Seccomp: 2") {
		t.Fatalf("through the launcher: %s", out)
	}
	var left []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		left = confinedThreads(t)
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		t.Fatalf("threads of this process still confined: %v", left)
	}
}

func confinedThreads(t *testing.T) []string {
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread just ended
		}
		if strings.Contains(string(b), "NoNewPrivs:\t1") {
			out = append(out, f)
		}
	}
	return out
}

// The restricted thread is the command's parent, so it stays (parked)
// until the command has been waited for, as the parent thread of any
// command Go starts does: the kernel's documented "parent" for
// PR_SET_PDEATHSIG is that thread. It ends after Wait.
func TestInProcessStartKeepsTheParentThreadWhileTheCommandRuns(t *testing.T) {
	cmd, err := Command(context.Background(), Profile{DenyHostStop: true, LandlockABI: Probe().LandlockABI}, "/bin/sh", "-c", "sleep 0.5")
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)
	during := confinedThreads(t)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(during) != 1 {
		t.Fatalf("while the command ran, %d restricted threads (want its parent, 1)", len(during))
	}
	for deadline := time.Now().Add(5 * time.Second); len(confinedThreads(t)) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the parent thread did not end after Wait")
		}
	}
}
