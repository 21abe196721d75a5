package server

import (
	"testing"
	"time"
)

// The per-request cost of the HTTP metrics (BENCHMARKS.md, "Metrics").
func BenchmarkRouteObserve(b *testing.B) {
	m := newMetrics()
	o := m.forRoute(&Route{Method: "GET", Path: "/api/auth/me"})
	b.ReportAllocs()
	for b.Loop() {
		o.observe(200, 150*time.Microsecond)
	}
}
