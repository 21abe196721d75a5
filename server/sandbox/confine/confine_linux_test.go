package confine

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// The launcher's constants are written out (see the package comment):
// each must be the kernel's value as golang.org/x/sys/unix has it.
func TestConstantsMatchXSysUnix(t *testing.T) {
	for name, c := range map[string][2]uint64{
		"EXECUTE": {llExecute, unix.LANDLOCK_ACCESS_FS_EXECUTE}, "WRITE_FILE": {llWriteFile, unix.LANDLOCK_ACCESS_FS_WRITE_FILE},
		"READ_FILE": {llReadFile, unix.LANDLOCK_ACCESS_FS_READ_FILE}, "READ_DIR": {llReadDir, unix.LANDLOCK_ACCESS_FS_READ_DIR},
		"REMOVE_DIR": {llRemoveDir, unix.LANDLOCK_ACCESS_FS_REMOVE_DIR}, "REMOVE_FILE": {llRemoveFile, unix.LANDLOCK_ACCESS_FS_REMOVE_FILE},
		"MAKE_CHAR": {llMakeChar, unix.LANDLOCK_ACCESS_FS_MAKE_CHAR}, "MAKE_DIR": {llMakeDir, unix.LANDLOCK_ACCESS_FS_MAKE_DIR},
		"MAKE_REG": {llMakeReg, unix.LANDLOCK_ACCESS_FS_MAKE_REG}, "MAKE_SOCK": {llMakeSock, unix.LANDLOCK_ACCESS_FS_MAKE_SOCK},
		"MAKE_FIFO": {llMakeFifo, unix.LANDLOCK_ACCESS_FS_MAKE_FIFO}, "MAKE_BLOCK": {llMakeBlock, unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK},
		"MAKE_SYM": {llMakeSym, unix.LANDLOCK_ACCESS_FS_MAKE_SYM}, "REFER": {llRefer, unix.LANDLOCK_ACCESS_FS_REFER},
		"TRUNCATE":     {llTruncate, unix.LANDLOCK_ACCESS_FS_TRUNCATE},
		"NET_BIND_TCP": {llNetBindTCP, unix.LANDLOCK_ACCESS_NET_BIND_TCP}, "NET_CONNECT_TCP": {llNetConnectTCP, unix.LANDLOCK_ACCESS_NET_CONNECT_TCP},
		"SCOPE_ABSTRACT": {llScopeAbstract, unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET}, "SCOPE_SIGNAL": {llScopeSignal, unix.LANDLOCK_SCOPE_SIGNAL},
		"CREATE_RULESET_VERSION":      {llCreateRulesetVersion, unix.LANDLOCK_CREATE_RULESET_VERSION},
		"RULE_PATH_BENEATH":           {llRulePathBeneath, unix.LANDLOCK_RULE_PATH_BENEATH},
		"SYS_LANDLOCK_CREATE_RULESET": {sysLandlockCreateRuleset, unix.SYS_LANDLOCK_CREATE_RULESET},
		"SYS_LANDLOCK_ADD_RULE":       {sysLandlockAddRule, unix.SYS_LANDLOCK_ADD_RULE}, "SYS_LANDLOCK_RESTRICT_SELF": {sysLandlockRestrictSelf, unix.SYS_LANDLOCK_RESTRICT_SELF},
		"O_PATH": {oPath, unix.O_PATH}, "PR_SET_NO_NEW_PRIVS": {prSetNoNewPrivs, unix.PR_SET_NO_NEW_PRIVS},
		"SECCOMP_RET_KILL_PROCESS": {retKill, unix.SECCOMP_RET_KILL_PROCESS}, "SECCOMP_RET_ALLOW": {retOK, unix.SECCOMP_RET_ALLOW},
		"SECCOMP_RET_ERRNO|EPERM": {uint64(retPerm), unix.SECCOMP_RET_ERRNO | uint64(unix.EPERM)},
		"SECCOMP_SET_MODE_FILTER": {seccompSetModeFilter, unix.SECCOMP_SET_MODE_FILTER},
		"SYS_REBOOT":              {sysReboot, unix.SYS_REBOOT}, "SYS_KEXEC_LOAD": {sysKexecLoad, unix.SYS_KEXEC_LOAD},
		"SYS_KEXEC_FILE_LOAD": {sysKexecFileLoad, unix.SYS_KEXEC_FILE_LOAD}, "SYS_INIT_MODULE": {sysInitModule, unix.SYS_INIT_MODULE},
		"SYS_FINIT_MODULE": {sysFinitModule, unix.SYS_FINIT_MODULE}, "SYS_DELETE_MODULE": {sysDeleteModule, unix.SYS_DELETE_MODULE},
		"SYS_MOUNT": {sysMount, unix.SYS_MOUNT}, "SYS_UMOUNT2": {sysUmount2, unix.SYS_UMOUNT2}, "SYS_PIVOT_ROOT": {sysPivotRoot, unix.SYS_PIVOT_ROOT},
		"SYS_MOVE_MOUNT": {sysMoveMount, unix.SYS_MOVE_MOUNT}, "SYS_FSMOUNT": {sysFsmount, unix.SYS_FSMOUNT}, "SYS_FSCONFIG": {sysFsconfig, unix.SYS_FSCONFIG},
		"SYS_MOUNT_SETATTR": {sysMountSetattr, unix.SYS_MOUNT_SETATTR}, "SYS_OPEN_TREE": {sysOpenTree, unix.SYS_OPEN_TREE},
		"SYS_SWAPON": {sysSwapon, unix.SYS_SWAPON}, "SYS_SWAPOFF": {sysSwapoff, unix.SYS_SWAPOFF}, "SYS_SETTIMEOFDAY": {sysSettimeofday, unix.SYS_SETTIMEOFDAY},
		"SYS_CLOCK_SETTIME": {sysClockSettime, unix.SYS_CLOCK_SETTIME}, "SYS_CLOCK_ADJTIME": {sysClockAdjtime, unix.SYS_CLOCK_ADJTIME},
		"SYS_ADJTIMEX": {sysAdjtimex, unix.SYS_ADJTIMEX}, "SYS_SETHOSTNAME": {sysSethostname, unix.SYS_SETHOSTNAME},
		"SYS_SETDOMAINNAME": {sysSetdomainname, unix.SYS_SETDOMAINNAME}, "SYS_PTRACE": {sysPtrace, unix.SYS_PTRACE},
		"SYS_PROCESS_VM_WRITEV": {sysProcessVmWritev, unix.SYS_PROCESS_VM_WRITEV}, "SYS_ACCT": {sysAcct, unix.SYS_ACCT},
		"SYS_PIDFD_SEND_SIGNAL": {sysPidfdSendSignal, unix.SYS_PIDFD_SEND_SIGNAL}, "SYS_KILL": {sysKill, unix.SYS_KILL},
		"SYS_TKILL": {sysTkill, unix.SYS_TKILL}, "SYS_TGKILL": {sysTgkill, unix.SYS_TGKILL}, "SYS_PIDFD_OPEN": {sysPidfdOpen, unix.SYS_PIDFD_OPEN},
		"SYS_SOCKET": {sysSocket, unix.SYS_SOCKET}, "SYS_SECCOMP": {sysSeccomp, unix.SYS_SECCOMP},
	} {
		if c[0] != c[1] {
			t.Errorf("%s: %#x here, %#x in golang.org/x/sys/unix", name, c[0], c[1])
		}
	}
	want := map[string]uint64{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]
	if auditArch != want {
		t.Errorf("auditArch %#x, want %#x", auditArch, want)
	}
}

// What keeps the launcher ahead of the binary's start-up work is that
// this package imports nothing os does not already depend on (so it is
// initialised right after os). A new import must be one of these, or the
// launcher waits behind much of the binary's initialisation again.
func TestLauncherImportsStayLight(t *testing.T) {
	allowed := map[string]bool{"errors": true, "os": true, "path": true, "runtime": true, "slices": true, "sync": true, "syscall": true, "time": true,
		"unsafe": true}
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if len(f) > 8 && f[len(f)-8:] == "_test.go" {
			continue
		}
		src, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range src.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !allowed[p] {
				t.Errorf("%s imports %s: the launcher would wait for its initialisation", f, p)
			}
		}
	}
}

func TestParseRefusesWhatItDoesNotKnow(t *testing.T) {
	for _, words := range [][]string{{"future"}, {"read_only=1"}, {"temp_dir"}, {"temp_dir=/a", "temp_dir=/b"}, {"landlock_abi=x"}} {
		if _, err := Parse(words); err == nil {
			t.Errorf("%q was accepted", words)
		}
	}
	s, err := Parse([]string{"read_only", "write_paths=/a=b", "write_paths=/c", "landlock_abi=7", "temp_dir=/t"})
	if err != nil || !s.ReadOnly || len(s.WritePaths) != 2 || s.WritePaths[0] != "/a=b" || s.LandlockABI != 7 || s.TempDir != "/t" {
		t.Fatalf("%+v %v", s, err)
	}
}

func TestTextHelpers(t *testing.T) {
	if got := splitFields("         0       1000          1\n"); len(got) != 3 || got[0] != "0" || got[2] != "1" {
		t.Errorf("fields %q", got)
	}
	if b, a, ok := cut("k=v=w", '='); b != "k" || a != "v=w" || !ok {
		t.Error("cut")
	}
	if got := splitByte("/a::/b", ':'); len(got) != 3 || got[0] != "/a" || got[1] != "" || got[2] != "/b" {
		t.Errorf("split %q", got)
	}
	for _, n := range []int{0, 7, 12345, -3} {
		if itoa(n) != strconv.Itoa(n) {
			t.Errorf("itoa(%d) = %s", n, itoa(n))
		}
	}
	if n, err := atoi("17"); n != 17 || err != nil {
		t.Error("atoi 17")
	}
	for _, bad := range []string{"", "-1", "1x", "9999999999"} {
		if _, err := atoi(bad); err == nil {
			t.Errorf("atoi(%q) accepted", bad)
		}
	}
}
