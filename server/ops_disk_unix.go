//go:build linux || darwin || freebsd || netbsd || openbsd

package server

import "syscall"

// DiskFree is the space an unprivileged writer may still use under dir
// (readiness, metrics and doctor read it).
func DiskFree(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}
