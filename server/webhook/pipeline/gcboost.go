package pipeline

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// GC during an alert storm. A delivery allocates its parsed body, its
// normalized alerts and their JSON, and the group commit its statements'
// arguments, while the live heap stays small (about 10-20 MB under the
// ingest benchmark); at Go's default GOGC=100 the collector then runs
// every few megabytes. While group commits are large the pipeline lets
// the heap grow to five times its live size (GOGC=400) and goes back to
// the default once deliveries have been calm for stormCalm, so idle memory
// (issue 21's RSS row) is what it was. Measured with gctrace under the
// ingest benchmark (256 connections): GOGC=200 spent 6.4 µs of GC CPU
// (assist, background and idle mark workers) per event, GOGC=400 2.8 µs;
// the heap peaked at 68 vs 109 MB. When the storm ends the freed heap is
// returned at once: 20 s after a 10 s storm the process held 93 MB
// instead of 106-117 MB (GOGC=200, left to the scavenger).
//
// A larger live heap (a big knowledge index, say) must not make the storm
// cost five times that in memory: for the storm the runtime also gets a
// soft memory limit of what GOGC=200 would have let the heap reach (three
// times the live heap, read again every second of the storm) plus
// stormHeadroom, so a storm holds at most that much more memory than
// before, and the collector never runs more often than it did at
// GOGC=200. An operator's own GOGC or GOMEMLIMIT is left alone.
const (
	stormBatch     = 16  // a group commit at least this large is a storm
	stormGCPercent = 400 // GOGC during a storm
	stormCalm      = 2 * time.Second
	// stormHeadroom: what a storm may hold beyond GOGC=200's heap.
	stormHeadroom = 256 << 20
)

// gcBoost is the writer goroutine's own state (no locking).
type gcBoost struct {
	enabled bool
	on      bool
	base    int       // the GC percent before the storm
	baseMem int64     // the memory limit before the storm
	last    time.Time // the last storm-sized commit
	limitAt time.Time // when the storm's memory limit was last set
	calm    *time.Timer
}

func newGCBoost() *gcBoost {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &gcBoost{enabled: os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "", calm: t}
}

// committed notes a group commit of n deliveries.
func (g *gcBoost) committed(n int) {
	if !g.enabled || n < stormBatch {
		return
	}
	g.last = time.Now()
	if !g.on {
		g.baseMem = debug.SetMemoryLimit(-1) // reads it
		g.setLimit()
		g.base = debug.SetGCPercent(stormGCPercent)
		g.on = true
		g.calm.Reset(stormCalm)
		return
	}
	// The live heap can grow during a long storm (a dispatch backlog holds
	// parsed events): a limit from its start would then collect more often
	// than GOGC=200 did. Follow it, once a second.
	if g.last.Sub(g.limitAt) >= time.Second {
		g.setLimit()
	}
}

// setLimit sets the storm's memory limit from the current live heap.
func (g *gcBoost) setLimit() {
	debug.SetMemoryLimit(min(g.baseMem, stormMemLimit(liveHeap())))
	g.limitAt = g.last
}

// stormMemLimit is the soft memory limit during a storm for a live heap of
// live bytes: what GOGC=200 would let the heap grow to, plus stormHeadroom.
func stormMemLimit(live uint64) int64 {
	if live > (math.MaxInt64-stormHeadroom)/3 {
		return math.MaxInt64
	}
	return int64(3*live) + stormHeadroom
}

// liveHeap reads the heap marked live by the last GC (0 before the first).
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// calmC fires when a storm may be over (nil when none is on): the writer
// waits on it beside its queue and then calls check.
func (g *gcBoost) calmC() <-chan time.Time {
	if !g.on {
		return nil
	}
	return g.calm.C
}

// check ends the storm once no storm-sized commit came for stormCalm, or
// looks again when that time is up.
func (g *gcBoost) check() {
	if !g.on {
		return
	}
	if wait := stormCalm - time.Since(g.last); wait > 0 {
		g.calm.Reset(wait)
		return
	}
	g.end()
	// The storm's heap (several times the live one) would otherwise stay
	// resident for minutes while the scavenger returns it page by page:
	// collect now and give it back (off the writer's goroutine, which must
	// not wait for a full collection when the next delivery comes).
	go debug.FreeOSMemory()
}

// end restores the settings from before the storm.
func (g *gcBoost) end() {
	debug.SetGCPercent(g.base)
	debug.SetMemoryLimit(g.baseMem)
	g.on = false
}

// stop restores the default when the writer ends.
func (g *gcBoost) stop() {
	g.calm.Stop()
	if g.on {
		g.end()
	}
}
