//go:build !linux

package sandbox

import (
	"os/exec"
	"syscall"
)

func sysProcAttr(Profile) *syscall.SysProcAttr { return nil }

// PrivateMountNamespace is false off Linux.
func PrivateMountNamespace() bool { return false }

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
