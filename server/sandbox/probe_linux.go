package sandbox

import (
	"os"
	"strings"

	"github.com/opsagent/opsagent/server/sandbox/confine"
	"golang.org/x/sys/unix"
)

func probeKernel() Kernel {
	k := Kernel{OS: "linux", LandlockABI: confine.LandlockABI()}
	// PR_GET_SECCOMP answers EINVAL on a kernel built without seccomp.
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err == nil {
		k.Seccomp = true
	}
	// The sysctls say whether the kernel allows one; making one says
	// whether this process may (a container's seccomp profile or a
	// service's RestrictNamespaces= may forbid it).
	k.UserNamespaces = readInt("/proc/sys/user/max_user_namespaces") > 0 &&
		readInt("/proc/sys/kernel/unprivileged_userns_clone") != 0 &&
		readInt("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") != 1 &&
		canStartIn(userNamespaceAttr())
	return k
}

// readInt reads a sysctl file; a missing one reads as -1.
func readInt(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	n := 0
	for _, c := range strings.TrimSpace(string(b)) {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}
