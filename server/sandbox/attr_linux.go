package sandbox

import (
	"os"
	"os/exec"
	"syscall"
)

// sysProcAttr starts the launcher in its own process group (a timeout
// kills the command's whole tree), and in a private mount namespace when
// the profile hides the system sockets: directly as root, else inside a
// user namespace of our own uid where the kernel allows one.
func sysProcAttr(p Profile) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	if !p.HideSystemSockets {
		return a
	}
	k := Probe()
	switch {
	case os.Geteuid() == 0:
		a.Cloneflags = syscall.CLONE_NEWNS
	case k.UserNamespaces:
		a.Cloneflags = syscall.CLONE_NEWNS | syscall.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Geteuid(), HostID: os.Geteuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getegid(), HostID: os.Getegid(), Size: 1}}
		// The user's own uid inside holds no capability after exec, so the
		// launcher (or helper) could not make its mounts: CAP_SYS_ADMIN in
		// the new namespace is kept as an ambient capability, and dropped
		// on the thread that starts the command (confine.Apply).
		a.AmbientCaps = []uintptr{capSysAdmin}
	}
	return a
}

const capSysAdmin = 21

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
