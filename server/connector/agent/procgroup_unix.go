//go:build unix

package agent

import (
	"os/exec"
	"syscall"
)

// setProcessGroup runs the command in its own process group and makes a
// timeout or cancel kill the whole group (a shell's children included).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
