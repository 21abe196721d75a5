package pipeline

import (
	"os"
	"runtime/debug"
	"time"
)

// GC during an alert storm. A delivery allocates its parsed body, its
// normalized alerts and their JSON, while the live heap stays small; at
// Go's default GOGC=100 the collector then runs every few megabytes, and
// collection plus allocation were about a sixth of the process's CPU under
// the ingest benchmark. While group commits are large the pipeline lets
// the heap grow to three times its live size instead of two (GOGC=200: 9 %
// less CPU per event, same run, BENCHMARKS.md) and goes back to the
// default once deliveries have been calm for stormCalm, so idle memory
// (issue 21's RSS row) is what it was. An operator's own GOGC or
// GOMEMLIMIT is left alone.
const (
	stormBatch     = 16  // a group commit at least this large is a storm
	stormGCPercent = 200 // GOGC during a storm
	stormCalm      = 2 * time.Second
)

// gcBoost is the writer goroutine's own state (no locking).
type gcBoost struct {
	enabled bool
	on      bool
	base    int       // the GC percent before the storm
	last    time.Time // the last storm-sized commit
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
		g.base = debug.SetGCPercent(stormGCPercent)
		g.on = true
		g.calm.Reset(stormCalm)
	}
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
	debug.SetGCPercent(g.base)
	g.on = false
}

// stop restores the default when the writer ends.
func (g *gcBoost) stop() {
	g.calm.Stop()
	if g.on {
		debug.SetGCPercent(g.base)
		g.on = false
	}
}
