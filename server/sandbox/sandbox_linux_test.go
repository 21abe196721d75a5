package sandbox

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The test binary is its own launcher (Init), and with SANDBOX_PROBE set
// it is also the program: it makes the host-changing calls in spellings
// that cannot change anything (bad magic numbers, missing paths, signal
// 0) and prints what each answered, so a denial is told from the call's
// own error.
func TestMain(m *testing.M) {
	Init()
	if path := os.Getenv("SANDBOX_OPEN_FOR_WRITE"); path != "" {
		// Opens only, never writes: an open of /proc/sysrq-trigger does nothing.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err == nil {
			f.Close()
		}
		os.Stdout.WriteString("open=" + errname(unwrapErrno(err)) + "\n")
		os.Exit(0)
	}
	if os.Getenv("SANDBOX_RUN_HIDING") == "1" {
		// A line under a profile that hides the sockets, from a process
		// that may not be able to make a namespace.
		cmd, err := Command(context.Background(), Profile{ReadOnly: true, DenyHostStop: true, HideSystemSockets: true,
			LandlockABI: Probe().LandlockABI}, "/bin/sh", "-c", "echo ran; (echo x > /etc/opsagent-sandbox-marker) 2>/dev/null || echo write-refused")
		if err == nil {
			var out []byte
			out, err = cmd.CombinedOutput()
			os.Stdout.Write(out)
		}
		if err != nil {
			os.Stdout.WriteString("error: " + err.Error() + "\n")
		}
		os.Exit(0)
	}
	if os.Getenv("SANDBOX_PROBE") == "1" {
		probeCalls()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func errname(err error) string {
	if err == nil {
		return "ok"
	}
	if e, ok := err.(syscall.Errno); ok {
		return unix.ErrnoName(e)
	}
	return err.Error()
}

func probeCalls() {
	raw := func(nr uintptr, a ...uintptr) error {
		for len(a) < 6 {
			a = append(a, 0)
		}
		_, _, e := unix.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
		if e != 0 {
			return e
		}
		return nil
	}
	missing, _ := unix.BytePtrFromString("/nonexistent-opsagent-sandbox")
	bogus, _ := unix.BytePtrFromString("bogusfs")
	name, _ := os.Hostname()
	res := []string{
		// bad magic: EINVAL unfiltered, never a reboot
		"reboot=" + errname(raw(unix.SYS_REBOOT, 0x1234, 0x5678, 0, 0)),
		"sethostname=" + errname(unix.Sethostname([]byte(name))),
		"swapoff=" + errname(raw(unix.SYS_SWAPOFF, uintptr(unsafe.Pointer(missing)))),
		"mount=" + errname(raw(unix.SYS_MOUNT, uintptr(unsafe.Pointer(missing)), uintptr(unsafe.Pointer(missing)), uintptr(unsafe.Pointer(bogus)), 0, 0)),
		"umount2=" + errname(raw(unix.SYS_UMOUNT2, uintptr(unsafe.Pointer(missing)), 0)),
		"clock_settime=" + errname(raw(unix.SYS_CLOCK_SETTIME, 9999, 0)),
		"delete_module=" + errname(raw(unix.SYS_DELETE_MODULE, uintptr(unsafe.Pointer(bogus)), 0)),
		"finit_module=" + errname(raw(unix.SYS_FINIT_MODULE, ^uintptr(0), 0, 0)),
		"kexec_load=" + errname(raw(unix.SYS_KEXEC_LOAD, 0, 0, 0, 0xdead0000)),
		"ptrace=" + errname(raw(unix.SYS_PTRACE, unix.PTRACE_PEEKUSR, 999999999, 0, 0)),
		"kill1=" + errname(unix.Kill(1, 0)),
		"killall=" + errname(unix.Kill(-1, 0)),
		"killparent=" + errname(unix.Kill(os.Getppid(), 0)),
	}
	_, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	res = append(res, "socket="+errname(err))
	os.Stdout.WriteString(strings.Join(res, " ") + "\n")
}

func run(t *testing.T, p Profile, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	cmd, err := Command(context.Background(), p, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/bin:/bin:/usr/sbin:/sbin"}, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func probeUnder(t *testing.T, p Profile) map[string]string {
	t.Helper()
	self, _ := os.Executable()
	out, err := run(t, p, t.TempDir(), []string{"SANDBOX_PROBE=1"}, self)
	if err != nil {
		t.Fatalf("probe: %v %s", err, out)
	}
	m := map[string]string{}
	for _, f := range strings.Fields(out) {
		k, v, _ := strings.Cut(f, "=")
		m[k] = v
	}
	return m
}

func TestHostChangingCallsAreDeniedAndOnlyUnderTheFilter(t *testing.T) {
	k := Probe()
	if !k.Seccomp {
		t.Fatal("this machine has no seccomp")
	}
	free := probeUnder(t, Profile{})
	// Without the filter each call fails on its bogus argument, not EPERM
	// (this is what proves the EPERM below comes from the filter).
	for call, want := range map[string]string{"reboot": "EINVAL", "swapoff": "ENOENT", "clock_settime": "EINVAL"} {
		if os.Geteuid() == 0 && free[call] != want {
			t.Errorf("unfiltered %s answered %s, want %s", call, free[call], want)
		}
	}
	for _, p := range []Profile{{DenyHostStop: true}, {ReadOnly: true, ScopeSignals: true, LandlockABI: k.LandlockABI},
		{ReadOnly: true, ScopeSignals: true}} {
		got := probeUnder(t, p)
		for _, call := range []string{"reboot", "sethostname", "swapoff", "mount", "umount2", "clock_settime", "delete_module",
			"finit_module", "kexec_load", "ptrace", "kill1", "killall"} {
			if got[call] != "EPERM" {
				t.Errorf("%s: %s answered %s, want EPERM", p.Summary(), call, got[call])
			}
		}
		if p.ScopeSignals && p.LandlockABI >= 6 && got["killparent"] != "EPERM" {
			t.Errorf("%s: a signal to the parent answered %s", p.Summary(), got["killparent"])
		}
	}
	if got := probeUnder(t, Profile{NoNetwork: true}); got["socket"] != "EPERM" || got["reboot"] != free["reboot"] {
		t.Errorf("no network: %v", got)
	}
}

// Both ways a read-only command's temp dir is guarded: a temp dir of its
// own anywhere (one Landlock layer), and one made by TempDir beside other
// commands' (a shared layer kept built, and a small one for its own dir):
// the other commands' temp dirs are as read-only as the rest.
func TestReadOnlyProfileRefusesWritesButKeepsTempAndDevNull(t *testing.T) {
	k := Probe()
	if k.LandlockABI < 3 {
		t.Fatalf("this machine has Landlock ABI %d", k.LandlockABI)
	}
	for _, layout := range []string{"own dir", "TempDir"} {
		dir := t.TempDir()
		tmp := filepath.Join(dir, "private-tmp")
		other := filepath.Join(dir, "other-tmp")
		if layout == "TempDir" {
			var err error
			if tmp, _, err = TempDir(dir); err != nil {
				t.Fatal(err)
			}
			if other, _, err = TempDir(dir); err != nil {
				t.Fatal(err)
			}
		} else if err := errors.Join(os.Mkdir(tmp, 0o700), os.Mkdir(other, 0o700)); err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(os.WriteFile(filepath.Join(dir, "victim"), []byte("keep\n"), 0o600),
			os.WriteFile(filepath.Join(other, "theirs.sh"), []byte("#!/bin/sh\necho ran-theirs\n"), 0o700)); err != nil {
			t.Fatal(err)
		}
		p := Profile{ReadOnly: true, TempDir: tmp, LandlockABI: k.LandlockABI, DenyHostStop: true, ScopeSignals: true}
		script := `echo x > marker; echo y > victim; true > victim; rm -f victim; mkdir newdir; ln -s victim link; echo ok > /dev/null && echo devnull-ok;
echo t > "$TMPDIR/t" && cat "$TMPDIR/t"; mv "$TMPDIR/t" "$TMPDIR/u" && echo moved-ok; printf '#!/bin/sh\necho ran\n' > "$TMPDIR/x.sh"; chmod +x "$TMPDIR/x.sh"; "$TMPDIR/x.sh"; cat victim
echo z > ` + other + `/marker; ` + other + `/theirs.sh`
		for i := 0; i < 2; i++ { // the second finds the shared layer built
			out, _ := run(t, p, dir, []string{"TMPDIR=" + tmp}, "/bin/sh", "-c", script)
			for _, f := range []string{"marker", "newdir", "link", filepath.Base(other) + "/marker"} {
				if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
					t.Errorf("%s: %s was made under the read-only profile: %s", layout, f, out)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "victim")); string(b) != "keep\n" {
				t.Errorf("%s: victim changed: %q", layout, b)
			}
			for _, want := range []string{"devnull-ok", "\nt\n", "moved-ok", "keep"} {
				if !strings.Contains(out, want) {
					t.Errorf("%s: output lacks %q: %s", layout, want, out)
				}
			}
			if strings.Contains(out, "ran\n") || layout == "TempDir" && strings.Contains(out, "ran-theirs") {
				t.Errorf("%s: a file in a temp dir was executed: %s", layout, out)
			}
			refused := strings.Join(p.Refusals(out, dir), "; ")
			if !strings.Contains(refused, "write to "+filepath.Join(dir, "marker")) {
				t.Errorf("%s: refusals: %s (output %s)", layout, refused, out)
			}
			os.Remove(filepath.Join(tmp, "u"))
		}
	}
}

// A kept ruleset is rebuilt when a directory its rules came from changes:
// a directory made beside a denied one after the rules were built is as
// writable as one that was there before.
func TestKeptRulesetsFollowTheirDirectories(t *testing.T) {
	k := Probe()
	dir := t.TempDir()
	if err := errors.Join(os.Mkdir(filepath.Join(dir, "a"), 0o700), os.Mkdir(filepath.Join(dir, "locked"), 0o700)); err != nil {
		t.Fatal(err)
	}
	p := Profile{DenyHostStop: true, DenyWritePaths: []string{filepath.Join(dir, "locked")}, LandlockABI: k.LandlockABI}
	write := func(sub string) string {
		out, _ := run(t, p, dir, nil, "/bin/sh", "-c", "echo x > "+sub+"/f && echo wrote")
		return out
	}
	if out := write("a"); !strings.Contains(out, "wrote") {
		t.Fatalf("a: %s", out)
	}
	if err := os.Mkdir(filepath.Join(dir, "b"), 0o700); err != nil {
		t.Fatal(err)
	}
	if out := write("b"); !strings.Contains(out, "wrote") {
		t.Fatalf("a directory made after the rules were kept is not writable: %s", out)
	}
	if out := write("locked"); strings.Contains(out, "wrote") {
		t.Fatalf("the denied directory was written: %s", out)
	}
}

func TestNoDeleteNoExecNewAndNoNetwork(t *testing.T) {
	k := Probe()
	dir := t.TempDir()
	for _, f := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p := Profile{NoDelete: true, NoExecNew: true, NoNetwork: true, LandlockABI: k.LandlockABI}
	script := `rm -f a; rmdir d; : > b; mv b c; echo more >> a; echo new > n; printf '#!/bin/sh\necho ran\n' > x; chmod +x x; ./x; cp /bin/true ./t; ./t && echo copied-ran;
exec 3<>/dev/tcp/127.0.0.1/` + strings.TrimPrefix(ln.Addr().String(), "127.0.0.1:") + ` && echo connected`
	out, _ := run(t, p, dir, nil, "/bin/bash", "-c", script)
	if b, _ := os.ReadFile(filepath.Join(dir, "a")); string(b) != "a\nmore\n" {
		t.Errorf("a: %q (appending is allowed, deleting is not): %s", b, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b")); string(b) != "b\n" {
		t.Errorf("b was truncated or moved: %q %s", b, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "d")); err != nil {
		t.Errorf("d was removed: %s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "n")); err != nil {
		t.Errorf("creating a file is allowed: %s", out)
	}
	for _, bad := range []string{"ran", "connected"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s: %s", bad, out)
		}
	}
	// Without the profile the same script deletes and runs (the test can fail).
	free, _ := run(t, Profile{}, dir, nil, "/bin/bash", "-c", `./x; rm -f a && echo removed`)
	if !strings.Contains(free, "ran") || !strings.Contains(free, "removed") {
		t.Errorf("unsandboxed: %s", free)
	}
}

func TestLauncherRefusesAnUnknownProfileField(t *testing.T) {
	self, _ := os.Executable()
	out, err := exec.Command(self, LauncherArg, "read_only", "future=1", "--", "/bin/true").CombinedOutput()
	var ee *exec.ExitError
	if err == nil || !errorsAs(err, &ee) || ee.ExitCode() != 126 || !strings.Contains(string(out), "unknown field") {
		t.Fatalf("%v %s", err, out)
	}
}

func unwrapErrno(err error) error {
	var e syscall.Errno
	if errorsAs(err, &e) {
		return e
	}
	return err
}

func TestApprovedProfileKeepsWritesButNotTheStopSwitches(t *testing.T) {
	k := Probe()
	dir := t.TempDir()
	// New files directly beside a protected one cannot be written (the
	// parent gets only what both allow), so the stand-in has its own dir.
	standIn := filepath.Join(dir, "proc", "sysrq-stand-in")
	_ = os.Mkdir(filepath.Dir(standIn), 0o700)
	_ = os.Mkdir(filepath.Join(dir, "data"), 0o700)
	if err := os.WriteFile(standIn, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p := Profile{DenyHostStop: true, DenyWritePaths: []string{standIn}, LandlockABI: k.LandlockABI}
	out, _ := run(t, p, dir, nil, "/bin/sh", "-c", `echo b > `+standIn+`; cd data && echo w > written && cat written; rm written && echo removed`)
	if b, _ := os.ReadFile(standIn); len(b) != 0 || !strings.Contains(out, "w\nremoved") {
		t.Fatalf("stand-in %q, output %s", b, out)
	}
	self, _ := os.Executable()
	got, _ := run(t, p, dir, []string{"SANDBOX_OPEN_FOR_WRITE=/proc/sysrq-trigger"}, self)
	_, exists := os.Stat("/proc/sysrq-trigger")
	if want := map[bool]string{true: "open=ENOENT", false: "open=EACCES"}[exists != nil]; strings.TrimSpace(got) != want {
		t.Fatalf("opening /proc/sysrq-trigger for writing: %s", got)
	}
	if p.writable("/proc/sysrq-trigger") || !p.writable(filepath.Join(dir, "x")) {
		t.Fatal("writable() disagrees with the profile")
	}
}

// Where no namespace can be made (root without CAP_SYS_ADMIN, as in a
// container's default profile), a line whose profile hides the sockets
// still runs, confined, instead of failing to start.
func TestLinesRunWhereNoNamespaceCanBeMade(t *testing.T) {
	setpriv, err := exec.LookPath("setpriv")
	if os.Geteuid() != 0 || err != nil {
		t.Skip("needs root and setpriv to take CAP_SYS_ADMIN away")
	}
	self, _ := os.Executable()
	cmd := exec.Command(setpriv, "--inh-caps=-sys_admin", "--bounding-set=-sys_admin", self)
	cmd.Env = append(os.Environ(), "SANDBOX_RUN_HIDING=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ran\nwrite-refused") {
		t.Fatalf("%v\n%s", err, out)
	}
}
