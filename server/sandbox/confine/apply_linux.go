package confine

import (
	"errors"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// applyAndExec restricts this thread and execs the program on it. Landlock
// and no_new_privs hold per thread and pass through execve, and execve
// ends every other thread, so the command starts with exactly this
// thread's restrictions.
func applyAndExec(s Spec, name string, args []string) error {
	runtime.LockOSThread()
	path, err := lookPath(name, os.Getenv("PATH"))
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
	if err := dropCapabilities(); err != nil {
		return err
	}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return errors.New("no_new_privs: " + errno.Error())
	}
	if err := applyLandlock(s); err != nil {
		return err
	}
	return applySeccomp(s)
}

const prSetNoNewPrivs = 38 // PR_SET_NO_NEW_PRIVS

// dropCapabilities leaves the calling thread's command no capability it
// did not have as the host's user: the ambient set is cleared (a launcher
// or helper in a user namespace holds CAP_SYS_ADMIN there as an ambient
// capability, to make its mounts after its exec, and ambient capabilities
// pass through execve), and, unless the thread is root, the permitted
// and effective sets are emptied too. Capabilities are per thread.
func dropCapabilities() error {
	const prCapAmbient, prCapAmbientClearAll = 47, 4
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientClearAll, 0, 0, 0, 0); errno != 0 && errno != syscall.EINVAL {
		return errors.New("clearing the ambient capabilities: " + errno.Error())
	}
	if syscall.Getuid() == 0 {
		return nil
	}
	hdr := struct {
		version uint32
		pid     int32
	}{version: 0x20080522} // _LINUX_CAPABILITY_VERSION_3, this thread
	var data [2]struct{ effective, permitted, inheritable uint32 }
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); errno != 0 {
		return errors.New("dropping capabilities: " + errno.Error())
	}
	return nil
}

// lookPath finds name as exec.LookPath does for the launcher's needs: a
// name with a slash is used as it is, any other is searched in the
// absolute directories of pathList, the command's PATH (a relative entry
// could name a place the command itself controls).
func lookPath(name, pathList string) (string, error) {
	if indexByte(name, '/') >= 0 {
		return name, nil
	}
	for _, dir := range splitByte(pathList, ':') {
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
	self, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return
	}
	// A process in a user namespace of its own may not read its parent's
	// namespaces (the kernel's ptrace check); it knows its mount namespace
	// is private by the namespace's owner instead.
	parent, err := os.Readlink("/proc/" + itoa(os.Getppid()) + "/ns/mnt")
	if err == nil && self == parent || err != nil && !inOwnUserNamespace() {
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

// inOwnUserNamespace reports whether this process is in a user namespace
// other than the host's and its mount namespace belongs to that user
// namespace, as when both were made by one clone (CLONE_NEWUSER with
// CLONE_NEWNS): mounts made there reach no other namespace.
func inOwnUserNamespace() bool {
	b, err := os.ReadFile("/proc/self/uid_map")
	if f := splitFields(string(b)); err != nil || len(f) == 3 && f[2] == "4294967295" {
		return false // the host's own namespace maps every uid
	}
	mnt, err := syscall.Open("/proc/self/ns/mnt", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer syscall.Close(mnt)
	const nsGetUserns = 0xb701 // NS_GET_USERNS
	owner, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(mnt), nsGetUserns, 0)
	if errno != 0 {
		return false
	}
	defer syscall.Close(int(owner))
	var got, own syscall.Stat_t
	if syscall.Fstat(int(owner), &got) != nil || syscall.Stat("/proc/self/ns/user", &own) != nil {
		return false
	}
	return got.Ino == own.Ino && got.Dev == own.Dev
}
