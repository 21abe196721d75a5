package sandbox

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// sysProcAttr starts the launcher in its own process group (a timeout
// kills the command's whole tree), and in a private mount namespace when
// the profile hides the system sockets and this host lets us make one.
func sysProcAttr(p Profile) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	if !p.HideSystemSockets {
		return a
	}
	if ns := privateMounts(); ns != nil {
		a.Cloneflags, a.UidMappings, a.GidMappings, a.AmbientCaps = ns.Cloneflags, ns.UidMappings, ns.GidMappings, ns.AmbientCaps
	}
	return a
}

// PrivateMountNamespace reports whether lines whose profile hides the
// system sockets get a private mount namespace on this host.
func PrivateMountNamespace() bool { return privateMounts() != nil }

var privateNS struct {
	once sync.Once
	attr *syscall.SysProcAttr
}

// privateMounts is how this process starts a child in a private mount
// namespace: directly as root, else inside a user namespace of our own
// uid. It is tried once for real, and is nil where it fails: a container
// or service manager may forbid new namespaces (Docker's default seccomp
// profile, root without CAP_SYS_ADMIN, systemd's RestrictNamespaces=),
// and then the sockets stay visible rather than every such command
// failing to start.
func privateMounts() *syscall.SysProcAttr {
	privateNS.once.Do(func() {
		var a *syscall.SysProcAttr
		switch {
		case os.Geteuid() == 0:
			a = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
		case Probe().UserNamespaces:
			a = userNamespaceAttr()
		}
		if a != nil && canStartIn(a) {
			privateNS.attr = a
		}
	})
	return privateNS.attr
}

// userNamespaceAttr makes a user namespace that maps only our own uid and
// gid, with a private mount namespace in it. Our uid inside holds no
// capability after exec, so the launcher (or helper) could not make its
// mounts: CAP_SYS_ADMIN in the new namespace is kept as an ambient
// capability, and dropped on the thread that starts the command
// (confine.Apply).
func userNamespaceAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWNS | syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: os.Geteuid(), HostID: os.Geteuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getegid(), HostID: os.Getegid(), Size: 1}},
		AmbientCaps: []uintptr{capSysAdmin},
	}
}

// canStartIn starts the binary in the namespaces a asks for, as the
// launcher with no arguments (it exits at once), and reports whether the
// kernel let it.
func canStartIn(a *syscall.SysProcAttr) bool {
	self, err := os.Executable()
	if err != nil {
		return false
	}
	try := *a
	p, err := os.StartProcess(self, []string{self, LauncherArg}, &os.ProcAttr{Env: []string{}, Sys: &try})
	if err != nil {
		return false
	}
	_, _ = p.Wait()
	return true
}

const capSysAdmin = 21

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
