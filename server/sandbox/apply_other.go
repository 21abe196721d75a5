//go:build !linux

package sandbox

import "errors"

func applyAndExec(Profile, string, []string) error {
	return errors.New("the sandbox runs commands on Linux only")
}
