package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// hiding is a profile that needs the private mount namespace, so the
// helper starts it.
func hiding(t *testing.T, p Profile) Profile {
	t.Helper()
	if !Probe().UserNamespaces && os.Geteuid() != 0 {
		t.Skip("no user namespaces here: these profiles go through the launcher")
	}
	p.HideSystemSockets = true
	return p
}

func helperCommand(t *testing.T, ctx context.Context, p Profile, script string) *Cmd {
	t.Helper()
	cmd, err := Command(ctx, p, "/bin/sh", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = []string{"PATH=/usr/bin:/bin", "FOO=bar"}
	return cmd
}

// The helper starts the command as this process's child, in its private
// mount namespace, with its own stdio, directory, environment and exit
// status, confined as the launcher would confine it.
func TestHelperStartsTheCommandAsOurChildConfined(t *testing.T) {
	dir := t.TempDir()
	tmp := t.TempDir()
	p := hiding(t, Profile{ReadOnly: true, DenyHostStop: true, ScopeSignals: true, TempDir: tmp, LandlockABI: Probe().LandlockABI})
	script := `echo "ppid=$PPID foo=$FOO pwd=$(pwd)"; readlink /proc/self/ns/mnt; grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status | tr -s '\t' ' '
(echo x > marker) 2>/dev/null || echo write-refused; echo y > ` + tmp + `/ok && echo temp-ok
cat; echo oops >&2; exit 3`
	cmd := helperCommand(t, context.Background(), p, script)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader("from-stdin\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if cmd.helped == nil {
		t.Fatal("the command did not go through the helper")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("exit: %v (want exit status 3)\n%s%s", err, stdout.String(), stderr.String())
	}
	ourNS, _ := os.Readlink("/proc/self/ns/mnt")
	out := stdout.String()
	for _, want := range []string{"ppid=" + strconv.Itoa(os.Getpid()) + " foo=bar pwd=" + dir, "NoNewPrivs: 1", "Seccomp: 2",
		"write-refused", "temp-ok", "from-stdin"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, ourNS) {
		t.Errorf("the command shares our mount namespace %s", ourNS)
	}
	if stderr.String() != "oops\n" {
		t.Errorf("stderr %q", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "marker")); err == nil {
		t.Error("the read-only profile let the command write")
	}
	if threads := confinedThreadsOf(t, helperPID()); len(threads) > 0 {
		// Each command's thread in the helper ends once it has forked.
		time.Sleep(200 * time.Millisecond)
		if threads = confinedThreadsOf(t, helperPID()); len(threads) > 0 {
			t.Errorf("restricted threads left in the helper: %v", threads)
		}
	}
}

// The system D-Bus and systemd's sockets are not there for the command,
// through the helper or the launcher, and are for us. The command holds no
// capability the helper or launcher kept for its mounts.
func TestHelperAndLauncherHideTheSystemSockets(t *testing.T) {
	p := hiding(t, Profile{DenyHostStop: true, LandlockABI: Probe().LandlockABI})
	var visible []string
	for _, d := range []string{"/run/dbus", "/run/systemd"} {
		if ents, err := os.ReadDir(d); err == nil && len(ents) > 0 {
			visible = append(visible, d)
		}
	}
	if len(visible) == 0 {
		t.Skip("this machine has no system sockets to hide")
	}
	script := "ls -A " + strings.Join(visible, " ") + "; grep -E '^Cap(Amb|Eff):' /proc/self/status"
	for _, via := range []string{"helper", "launcher"} {
		cmd := helperCommand(t, context.Background(), p, script)
		var out []byte
		var err error
		if via == "helper" {
			out, err = cmd.CombinedOutput()
		} else {
			out, err = cmd.Cmd.CombinedOutput()
		}
		if err != nil {
			t.Fatalf("%s: %v %s", via, err, out)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if line != "" && !strings.HasSuffix(line, ":") && !strings.HasPrefix(line, "Cap") {
				t.Fatalf("through the %s the command sees entries in %v:\n%s", via, visible, out)
			}
		}
		if os.Geteuid() != 0 && (!strings.Contains(string(out), "CapAmb:\t0000000000000000") || !strings.Contains(string(out), "CapEff:\t0000000000000000")) {
			t.Errorf("through the %s the command holds capabilities:\n%s", via, out)
		}
	}
}

// A timeout kills the command's whole process group, a background child
// included, and Wait comes back.
func TestHelperKillsTheGroupOnTimeout(t *testing.T) {
	p := hiding(t, Profile{DenyHostStop: true, LandlockABI: Probe().LandlockABI})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	pidFile := filepath.Join(t.TempDir(), "bg")
	cmd := helperCommand(t, ctx, p, "sleep 30 & echo $! > "+pidFile+"; wait")
	cmd.WaitDelay = time.Second
	start := time.Now()
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || time.Since(start) > 10*time.Second {
		t.Fatalf("after %s: %v", time.Since(start), err)
	}
	b, _ := os.ReadFile(pidFile)
	bg, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if bg <= 0 {
		t.Fatalf("no background pid: %q", b)
	}
	for deadline := time.Now().Add(5 * time.Second); syscall.Kill(bg, 0) == nil && !isZombie(bg); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the background child outlived the timeout")
		}
	}
}

// Commands are this process's children, so one that is running when the
// helper dies finishes with its own status, and the next command gets a
// new helper.
func TestHelperDeathLosesNoCommand(t *testing.T) {
	p := hiding(t, Profile{DenyHostStop: true, LandlockABI: Probe().LandlockABI})
	cmd := helperCommand(t, context.Background(), p, "sleep 0.3; exit 7")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	old := helperPID()
	if old == 0 || cmd.helped == nil {
		t.Fatal("no helper started the command")
	}
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("the running command: %v (want exit status 7)", err)
	}
	for i := 0; i < 3; i++ { // the first may find the dead helper's socket
		out, err := helperCommand(t, context.Background(), p, "echo again").Output()
		if err != nil || string(out) != "again\n" {
			t.Fatalf("after the helper died: %v %q", err, out)
		}
	}
	if now := helperPID(); now == old || now == 0 {
		t.Fatalf("helper %d, before %d", now, old)
	}
}

// A program that cannot be found or executed is an error from Start, with
// nothing left behind: an exec that fails after the fork leaves a child
// that is reaped.
func TestHelperStartFailuresLeaveNothingBehind(t *testing.T) {
	p := hiding(t, Profile{DenyHostStop: true, LandlockABI: Probe().LandlockABI})
	dir := t.TempDir()
	junk, plain := filepath.Join(dir, "junk"), filepath.Join(dir, "plain")
	if err := os.WriteFile(junk, []byte{0x7f, 'E', 'L', 'F', 0, 0, 0, 0}, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		want syscall.Errno
	}{{"/nonexistent/program", syscall.ENOENT}, {"no-such-program-anywhere", syscall.ENOENT}, {plain, syscall.EACCES},
		{junk, syscall.ENOEXEC}} {
		cmd, err := Command(context.Background(), p, c.name)
		if err != nil {
			t.Fatal(err)
		}
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		err = cmd.Start()
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		strays := forkerChildren(t)
		if len(strays) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("children left behind: %v", strays)
		}
	}
}

// Commands started at once each get their own status and output.
func TestHelperServesConcurrentCommands(t *testing.T) {
	p := hiding(t, Profile{ReadOnly: true, TempDir: t.TempDir(), LandlockABI: Probe().LandlockABI})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := helperCommand(t, context.Background(), p, "echo "+strconv.Itoa(i)+"; exit "+strconv.Itoa(i)).Output()
			var ee *exec.ExitError
			code := 0
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				errs <- err
				return
			}
			if code != i || string(out) != strconv.Itoa(i)+"\n" {
				errs <- errors.New("command " + strconv.Itoa(i) + ": exit " + strconv.Itoa(code) + ", output " + strconv.Quote(string(out)))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A request too large for the helper goes through the launcher, with the
// same result.
func TestHelperLeavesLargeCommandsToTheLauncher(t *testing.T) {
	p := hiding(t, Profile{DenyHostStop: true, LandlockABI: Probe().LandlockABI})
	long := strings.Repeat("x", 100<<10)
	cmd := helperCommand(t, context.Background(), p, "printf %s "+long+" | wc -c")
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != strconv.Itoa(len(long)) {
		t.Fatalf("%v %q", err, out)
	}
	if cmd.helped != nil {
		t.Fatal("a request over the helper's limit went to the helper")
	}
}

func helperPID() int {
	helper.mu.Lock()
	defer helper.mu.Unlock()
	return helper.pid
}

// forkerChildren are the forker thread's children other than helpers and
// the commands handed over: what a failed start would leave.
func forkerChildren(t *testing.T) []string {
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(forker.tid) + "/children")
	if err != nil {
		t.Skip("no /proc/PID/task/TID/children on this kernel")
	}
	helper.mu.Lock()
	defer helper.mu.Unlock()
	var out []string
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		if !helper.helpers[pid] && !helper.running[pid] {
			out = append(out, f)
		}
	}
	return out
}

func confinedThreadsOf(t *testing.T, pid int) []string {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/status")
	var out []string
	for _, f := range tasks {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), "NoNewPrivs:\t1") {
			out = append(out, f)
		}
	}
	return out
}

func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] == 'Z'
}
