package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hostCalls are the system calls that change the host as a whole: under
// DenyHostStop they fail with EPERM.
func hostCalls() []uint32 {
	calls := []uintptr{unix.SYS_REBOOT, unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_INIT_MODULE,
		unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE, unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT,
		unix.SYS_MOVE_MOUNT, unix.SYS_FSMOUNT, unix.SYS_FSCONFIG, unix.SYS_MOUNT_SETATTR, unix.SYS_OPEN_TREE,
		unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME,
		unix.SYS_ADJTIMEX, unix.SYS_SETHOSTNAME, unix.SYS_SETDOMAINNAME, unix.SYS_PTRACE, unix.SYS_PROCESS_VM_WRITEV,
		unix.SYS_ACCT, unix.SYS_PIDFD_SEND_SIGNAL}
	calls = append(calls, archHostCalls...)
	out := make([]uint32, len(calls))
	for i, c := range calls {
		out[i] = uint32(c)
	}
	return out
}

// seccompPlan is the filter of one profile: calls always refused, and
// calls refused for some first arguments (a pid or a socket family).
type seccompPlan struct {
	deny   []uint32
	argDen []argDeny
}

// argDeny refuses call nr when its first argument's low 32 bits equal one
// of values, or (negative) have the sign bit set.
type argDeny struct {
	nr       uint32
	values   []uint32
	negative bool
}

func planSeccomp(p Profile) seccompPlan {
	var s seccompPlan
	if p.DenyHostStop || p.ReadOnly {
		s.deny = hostCalls()
		// PID 1 and "every process": the signals that stop a host.
		for _, nr := range []uintptr{unix.SYS_KILL, unix.SYS_TKILL, unix.SYS_TGKILL, unix.SYS_PIDFD_OPEN} {
			s.argDen = append(s.argDen, argDeny{nr: uint32(nr), values: []uint32{1, 0xffffffff}})
		}
	}
	if p.ScopeSignals && p.LandlockABI < 6 {
		// No Landlock signal scope: refuse signals to pid <= 1 (0, 1 and
		// every negative pid: process groups and "all").
		s.argDen = s.argDen[:0]
		for _, nr := range []uintptr{unix.SYS_KILL, unix.SYS_TKILL, unix.SYS_TGKILL, unix.SYS_PIDFD_OPEN} {
			s.argDen = append(s.argDen, argDeny{nr: uint32(nr), values: []uint32{0, 1}, negative: true})
		}
	}
	if p.NoNetwork {
		s.argDen = append(s.argDen, argDeny{nr: uint32(unix.SYS_SOCKET), values: []uint32{unix.AF_INET, unix.AF_INET6, unix.AF_PACKET}})
	}
	return s
}

// BPF building blocks (classic BPF over struct seccomp_data).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16 // low 32 bits on little-endian machines
	retKill = unix.SECCOMP_RET_KILL_PROCESS
	retOK   = unix.SECCOMP_RET_ALLOW
	retPerm = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
)

func stmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
func jump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

const (
	ldAbs = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	jge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	jset  = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	ret   = unix.BPF_RET | unix.BPF_K
)

// program assembles the filter: a foreign architecture kills (no way
// around the table by another ABI), x32 numbers are refused, listed calls
// answer EPERM, argument checks follow, everything else is allowed.
func (s seccompPlan) program() []unix.SockFilter {
	prog := []unix.SockFilter{
		stmt(ldAbs, offArch),
		jump(jeq, auditArch, 1, 0),
		stmt(ret, retKill),
		stmt(ldAbs, offNr),
	}
	if runtime.GOARCH == "amd64" {
		prog = append(prog, jump(jge, 0x40000000, 0, 1), stmt(ret, retPerm))
	}
	for _, nr := range s.deny {
		prog = append(prog, jump(jeq, nr, 0, 1), stmt(ret, retPerm))
	}
	for _, a := range s.argDen {
		// ld nr; jeq nr ? check : skip; ld arg0; checks...; ret allow; ret EPERM
		checks := len(a.values)
		if a.negative {
			checks++
		}
		blockLen := 2 + checks + 2 // jeq, ld arg0, checks, ret ok, ret perm (after ld nr)
		prog = append(prog, stmt(ldAbs, offNr), jump(jeq, a.nr, 0, uint8(blockLen-1)), stmt(ldAbs, offArg0))
		left := checks
		for _, v := range a.values {
			prog = append(prog, jump(jeq, v, uint8(left), 0))
			left--
		}
		if a.negative {
			prog = append(prog, jump(jset, 0x80000000, uint8(left), 0))
		}
		prog = append(prog, stmt(ret, retOK), stmt(ret, retPerm))
	}
	return append(prog, stmt(ret, retOK))
}

// applySeccomp installs the filter on the calling thread (no_new_privs is
// set first, as the kernel demands of an unprivileged filter).
func applySeccomp(p Profile) error {
	plan := planSeccomp(p)
	if len(plan.deny) == 0 && len(plan.argDen) == 0 {
		return nil
	}
	prog := plan.program()
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("seccomp: %v", errno)
	}
	return nil
}
