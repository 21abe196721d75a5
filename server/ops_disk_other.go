//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package server

import "errors"

func diskFree(string) (uint64, error) {
	return 0, errors.New("free space is not measured on this platform")
}
