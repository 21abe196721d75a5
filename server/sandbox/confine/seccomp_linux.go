package confine

import (
	"errors"
	"runtime"
	"syscall"
	"unsafe"
)

// hostCalls are the system calls that change the host as a whole: under
// DenyHostStop they fail with EPERM.
func hostCalls() []uint32 {
	calls := []uintptr{sysReboot, sysKexecLoad, sysKexecFileLoad, sysInitModule,
		sysFinitModule, sysDeleteModule, sysMount, sysUmount2, sysPivotRoot,
		sysMoveMount, sysFsmount, sysFsconfig, sysMountSetattr, sysOpenTree,
		sysSwapon, sysSwapoff, sysSettimeofday, sysClockSettime, sysClockAdjtime,
		sysAdjtimex, sysSethostname, sysSetdomainname, sysPtrace, sysProcessVmWritev,
		sysAcct, sysPidfdSendSignal}
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

func planSeccomp(p Spec) seccompPlan {
	var s seccompPlan
	if p.DenyHostStop || p.ReadOnly {
		s.deny = hostCalls()
		// PID 1 and "every process": the signals that stop a host.
		for _, nr := range []uintptr{sysKill, sysTkill, sysTgkill, sysPidfdOpen} {
			s.argDen = append(s.argDen, argDeny{nr: uint32(nr), values: []uint32{1, 0xffffffff}})
		}
	}
	if p.ScopeSignals && p.LandlockABI < 6 {
		// No Landlock signal scope: refuse signals to pid <= 1 (0, 1 and
		// every negative pid: process groups and "all").
		s.argDen = s.argDen[:0]
		for _, nr := range []uintptr{sysKill, sysTkill, sysTgkill, sysPidfdOpen} {
			s.argDen = append(s.argDen, argDeny{nr: uint32(nr), values: []uint32{0, 1}, negative: true})
		}
	}
	if p.NoNetwork {
		s.argDen = append(s.argDen, argDeny{nr: uint32(sysSocket), values: []uint32{syscall.AF_INET, syscall.AF_INET6, syscall.AF_PACKET}})
	}
	return s
}

// BPF building blocks (classic BPF over struct seccomp_data).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16                                 // low 32 bits on little-endian machines
	retKill = 0x80000000                         // SECCOMP_RET_KILL_PROCESS
	retOK   = 0x7fff0000                         // SECCOMP_RET_ALLOW
	retPerm = 0x00050000 | uint32(syscall.EPERM) // SECCOMP_RET_ERRNO

	seccompSetModeFilter = 1
)

func stmt(code uint16, k uint32) syscall.SockFilter { return syscall.SockFilter{Code: code, K: k} }
func jump(code uint16, k uint32, jt, jf uint8) syscall.SockFilter {
	return syscall.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

const (
	ldAbs = syscall.BPF_LD | syscall.BPF_W | syscall.BPF_ABS
	jeq   = syscall.BPF_JMP | syscall.BPF_JEQ | syscall.BPF_K
	jge   = syscall.BPF_JMP | syscall.BPF_JGE | syscall.BPF_K
	jset  = syscall.BPF_JMP | syscall.BPF_JSET | syscall.BPF_K
	ret   = syscall.BPF_RET | syscall.BPF_K
)

// program assembles the filter: a foreign architecture kills (no way
// around the table by another ABI), x32 numbers are refused, listed calls
// answer EPERM, argument checks follow, everything else is allowed.
func (s seccompPlan) program() []syscall.SockFilter {
	prog := []syscall.SockFilter{
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
func applySeccomp(p Spec) error {
	plan := planSeccomp(p)
	if len(plan.deny) == 0 && len(plan.argDen) == 0 {
		return nil
	}
	prog := plan.program()
	fprog := syscall.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := syscall.Syscall(sysSeccomp, seccompSetModeFilter, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return errors.New("seccomp: " + errno.Error())
	}
	return nil
}
