package store

import (
	"os"
	"strconv"
)

// OPSAGENT_BENCH_PAGE_SIZE replaces newPageSize in the test binary, to weigh
// page sizes in process (BenchmarkIngestDistinctGroups' cpu-us/event and
// written-B/event, or callgrind), e.g.
//
//	OPSAGENT_BENCH_PAGE_SIZE=4096 go test ./store -run '^$' -bench IngestDistinctGroups -benchtime 20000x
func init() {
	if n, err := strconv.Atoi(os.Getenv("OPSAGENT_BENCH_PAGE_SIZE")); err == nil && n > 0 {
		newPageSize = n
	}
}
