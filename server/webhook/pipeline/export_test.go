package pipeline

// Arriving is how many deliveries the writer believes are on their way
// (between Ingest's start and the queue): it must come back to zero, or
// the writer would linger for deliveries that never come.
func Arriving(p *Pipeline) int32 { return p.arriving.Load() }
