//go:build unix

package agent_test

import (
	"syscall"
	"time"
)

// processCPU is user+system CPU time of the whole process, GC included. On
// a shared, loaded machine it measures work where wall time measures queueing.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
