package confine

import (
	"errors"
	"os"
	"runtime"
	"syscall"
)

// applyAndExec restricts this thread and execs the program on it. Landlock
// and no_new_privs hold per thread and pass through execve, and execve
// ends every other thread, so the command starts with exactly this
// thread's restrictions.
func applyAndExec(s Spec, name string, args []string) error {
	runtime.LockOSThread()
	path, err := lookPath(name)
	if err != nil {
		return err
	}
	if s.HideSystemSockets {
		hideSystemSockets()
	}
	if err := Apply(s); err != nil {
		return err
	}
	return syscall.Exec(path, append([]string{name}, args...), os.Environ())
}

// Apply sets no_new_privs, the Landlock domain and the seccomp filter of
// s on the calling thread only (the caller has locked it); whatever that
// thread starts inherits them.
func Apply(s Spec) error {
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return errors.New("no_new_privs: " + errno.Error())
	}
	if err := applyLandlock(s); err != nil {
		return err
	}
	return applySeccomp(s)
}

const prSetNoNewPrivs = 38 // PR_SET_NO_NEW_PRIVS

// lookPath finds name as exec.LookPath does for the launcher's needs: a
// name with a slash is used as it is, any other is searched in PATH's
// absolute directories (a relative entry could name a place the command
// itself controls).
func lookPath(name string) (string, error) {
	if indexByte(name, '/') >= 0 {
		return name, nil
	}
	for _, dir := range splitByte(os.Getenv("PATH"), ':') {
		if !hasPrefix(dir, "/") {
			continue
		}
		p := trimSuffix(dir, "/") + "/" + name
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New(quote(name) + ": executable file not found in $PATH")
}

// systemSocketDirs hold the system D-Bus and systemd's control sockets.
var systemSocketDirs = []string{"/run/dbus", "/var/run/dbus", "/run/systemd", "/run/user"}

// hideSystemSockets covers the socket directories with empty read-only
// tmpfs mounts. It runs only inside the private mount namespace the parent
// started the launcher in (Command sets CLONE_NEWNS for such profiles), and
// only after every mount was made a slave, so nothing reaches the host's
// mount table. Where any step fails the sockets stay as they are: the
// other layers still hold.
func hideSystemSockets() {
	self, err1 := os.Readlink("/proc/self/ns/mnt")
	parent, err2 := os.Readlink("/proc/" + itoa(os.Getppid()) + "/ns/mnt")
	if err1 != nil || err2 != nil || self == parent {
		return // not a namespace of our own: never touch the host's mounts
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_SLAVE, ""); err != nil {
		return
	}
	for _, d := range systemSocketDirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			_ = syscall.Mount("tmpfs", d, "tmpfs", syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "size=4k,mode=0755")
		}
	}
}
