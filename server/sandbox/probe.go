package sandbox

import (
	"fmt"
	"sync"
)

// Kernel is what a host's kernel offers the sandbox; each host reports
// its own (GET /api/connectors/{id}, opsagent doctor).
type Kernel struct {
	OS string `json:"os"`
	// LandlockABI is the Landlock version (0: none, or simulated away).
	LandlockABI int  `json:"landlock_abi"`
	Seccomp     bool `json:"seccomp"`
	// UserNamespaces: unprivileged user namespaces can be made.
	UserNamespaces bool `json:"user_namespaces"`
	// NoLandlockSimulated: the operator asked to behave as on a kernel
	// without Landlock (--sandbox-no-landlock), for testing the fallback.
	NoLandlockSimulated bool `json:"no_landlock_simulated,omitempty"`
}

// ReadOnlyEnforced: the kernel can hold the read-only promise, so
// read-only commands may run without a person.
func (k Kernel) ReadOnlyEnforced() bool { return k.LandlockABI >= 1 }

// Explain says in one line what the host enforces, and what it cannot.
func (k Kernel) Explain() string {
	switch {
	case k.NoLandlockSimulated:
		return "Landlock is turned off on this host (simulated with --sandbox-no-landlock): read-only commands are not auto-allowed and ask a person"
	case k.LandlockABI == 0:
		return "this kernel has no Landlock: read-only commands are not auto-allowed and ask a person; seccomp still denies host-changing calls"
	}
	s := fmt.Sprintf("Landlock ABI %d", k.LandlockABI)
	if k.LandlockABI < 4 {
		s += " (no network rules)"
	}
	if k.LandlockABI < 6 {
		s += " (signal scoping by seccomp)"
	}
	if k.Seccomp {
		s += ", seccomp"
	} else {
		s += ", no seccomp: host-changing calls are not denied by the kernel"
	}
	if k.UserNamespaces {
		s += ", user namespaces"
	}
	return s
}

var (
	probeOnce sync.Once
	probed    Kernel
)

// Probe asks the kernel once what it offers.
func Probe() Kernel {
	probeOnce.Do(func() { probed = probeKernel() })
	return probed
}

// WithoutLandlock is k as a kernel without Landlock would be (the
// --sandbox-no-landlock flag), when off is set.
func (k Kernel) WithoutLandlock(off bool) Kernel {
	if off {
		k.LandlockABI, k.NoLandlockSimulated = 0, true
	}
	return k
}
