//go:build !unix

package agent_test

import "time"

// processCPU is unavailable here; the cpu-ns/step metric then reads 0.
func processCPU() time.Duration { return 0 }
