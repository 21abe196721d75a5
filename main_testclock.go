package main

import (
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// testSchedulerClockEnv names a file holding a duration ("90s") that the
// scheduler's clock runs ahead of the real one. Test-only and off unless the
// variable is set: the three-process cluster test (server/pg_cluster_process_test.go)
// walks a cron task across many minute slots in seconds by moving every
// node's scheduling clock through one file. Nothing else of the server
// (tokens, rows, rate limits) reads this clock.
const testSchedulerClockEnv = "OPSAGENT_TEST_SCHEDULER_CLOCK"

// fileOffsetClock is the real clock plus the duration in path, read at each
// call (the scheduler asks once a tick); an unreadable or unparsable file
// keeps the last offset read.
func fileOffsetClock(path string) func() time.Time {
	var last atomic.Int64
	return func() time.Time {
		if b, err := os.ReadFile(path); err == nil {
			if d, err := time.ParseDuration(strings.TrimSpace(string(b))); err == nil {
				last.Store(int64(d))
			}
		}
		return time.Now().UTC().Add(time.Duration(last.Load()))
	}
}
