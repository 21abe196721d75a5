package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// applyAndExec restricts this thread and execs the program on it. Landlock
// and no_new_privs hold per thread and pass through execve, and execve
// ends every other thread, so the command starts with exactly this
// thread's restrictions.
func applyAndExec(p Profile, name string, args []string) error {
	runtime.LockOSThread()
	path, err := exec.LookPath(name)
	if err != nil {
		return err
	}
	if p.HideSystemSockets {
		hideSystemSockets()
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %v", err)
	}
	if err := applyLandlock(p); err != nil {
		return err
	}
	if err := applySeccomp(p); err != nil {
		return err
	}
	return unix.Exec(path, append([]string{name}, args...), os.Environ())
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
	parent, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", os.Getppid()))
	if err1 != nil || err2 != nil || self == parent {
		return // not a namespace of our own: never touch the host's mounts
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return
	}
	for _, d := range systemSocketDirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			_ = unix.Mount("tmpfs", d, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0755")
		}
	}
}
