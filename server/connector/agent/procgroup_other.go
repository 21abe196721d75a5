//go:build !unix

package agent

import "os/exec"

// setProcessGroup: without process groups, cancellation kills the shell only.
func setProcessGroup(cmd *exec.Cmd) {}
