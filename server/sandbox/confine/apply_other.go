//go:build !linux

package confine

import "errors"

func applyAndExec(Spec, string, []string) error {
	return errors.New("the sandbox runs commands on Linux only")
}

// LandlockABI is 0 off Linux.
func LandlockABI() int { return 0 }
