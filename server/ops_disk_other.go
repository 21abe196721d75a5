//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package server

import "errors"

// DiskFree is not measured on this platform.
func DiskFree(string) (uint64, error) {
	return 0, errors.New("free space is not measured on this platform")
}
