//go:build !linux

package shellscan

import "time"

func threadCPU() (time.Duration, bool) { return 0, false }
