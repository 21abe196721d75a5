package pipeline

import (
	"math"
	"runtime/debug"
	"testing"
	"time"
)

// gcPercent reads the current GC percent (SetGCPercent only reports it by
// replacing it).
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestGCBoostOnlyDuringAStorm(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	g := newGCBoost()
	g.committed(stormBatch - 1)
	if got := gcPercent(); got != 100 || g.calmC() != nil {
		t.Fatalf("small commits changed GOGC to %d", got)
	}
	g.committed(stormBatch * 4)
	if got := gcPercent(); got != stormGCPercent {
		t.Fatalf("storm GOGC %d, want %d", got, stormGCPercent)
	}
	if got, want := debug.SetMemoryLimit(-1), stormMemLimit(liveHeap()); got != want || got == math.MaxInt64 {
		t.Fatalf("storm memory limit %d, want %d", got, want)
	}
	// A long storm follows the live heap: a second later the limit is set again.
	debug.SetMemoryLimit(1 << 40)
	g.limitAt = time.Now().Add(time.Hour) // set just now, as far as committed can tell
	g.committed(stormBatch)
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Fatalf("the limit was set again within the second: %d", got)
	}
	g.limitAt = time.Now().Add(-2 * time.Second)
	g.committed(stormBatch)
	if got, want := debug.SetMemoryLimit(-1), stormMemLimit(liveHeap()); got != want {
		t.Fatalf("storm memory limit after a second %d, want %d", got, want)
	}
	g.check() // deliveries still storm-sized a moment ago
	if got := gcPercent(); got != stormGCPercent {
		t.Fatalf("the storm ended early: GOGC %d", got)
	}
	g.last = time.Now().Add(-stormCalm - time.Second)
	g.check()
	if got := gcPercent(); got != 100 || g.calmC() != nil {
		t.Fatalf("after the calm GOGC %d, want the default back", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("after the calm the memory limit is %d, want none", got)
	}
	g.committed(stormBatch)
	g.stop()
	if got := gcPercent(); got != 100 {
		t.Fatalf("stop left GOGC %d", got)
	}
}

func TestGCBoostLeavesAnOperatorsSettingAlone(t *testing.T) {
	t.Setenv("GOGC", "150")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	g := newGCBoost()
	g.committed(stormBatch * 4)
	if got := gcPercent(); got != 100 {
		t.Fatalf("GOGC set by the operator, yet the storm changed it to %d", got)
	}
}

// The storm's memory limit keeps what GOGC=200 allowed and adds a bounded
// headroom; an operator's tighter limit would win (min in committed).
func TestStormMemLimit(t *testing.T) {
	if got := stormMemLimit(0); got != stormHeadroom {
		t.Fatalf("no live heap: %d", got)
	}
	if got := stormMemLimit(100 << 20); got != 300<<20+stormHeadroom {
		t.Fatalf("100 MB live: %d", got)
	}
	if got := stormMemLimit(math.MaxUint64 / 2); got != math.MaxInt64 {
		t.Fatalf("overflow: %d", got)
	}
}
