//go:build !linux

package confine

import "os"

func helperMain() int {
	os.Stderr.WriteString("opsagent sandbox: the helper runs on Linux only\n")
	return 126
}
