//go:build !linux

package sandbox

import "runtime"

func probeKernel() Kernel { return Kernel{OS: runtime.GOOS} }
