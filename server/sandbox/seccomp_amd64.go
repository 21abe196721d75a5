//go:build linux && amd64

package sandbox

import "golang.org/x/sys/unix"

const auditArch = unix.AUDIT_ARCH_X86_64

// archHostCalls: raw port I/O can reset the machine.
var archHostCalls = []uintptr{unix.SYS_IOPL, unix.SYS_IOPERM}
