package store

import (
	"os"
	"time"
)

// OPSAGENT_BENCH_CKPT_DELAY replaces ckptDelay in the test binary, to weigh
// the background checkpointer's pace in process, e.g.
//
//	OPSAGENT_BENCH_CKPT_DELAY=60ms go test ./store -run '^$' \
//	    -bench IngestDistinctGroups -benchtime 60000x -cpuprofile c.prof
//
// then the checkpointer's CPU is (*checkpointer).run in the profile, and
// written-B/event shows the pages it copied. Measured (notes/runtime.md):
// 20 ms 6.2-8.0 µs of checkpointer CPU per event, 40 ms 6.3-7.0, 60 ms
// 4.3-6.0; written bytes per event 5 % fewer at 60 ms.
func init() {
	if d, err := time.ParseDuration(os.Getenv("OPSAGENT_BENCH_CKPT_DELAY")); err == nil && d > 0 {
		ckptDelay = d
	}
}
