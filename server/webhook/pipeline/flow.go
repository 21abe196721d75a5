package pipeline

import "time"

// Where an event is dispatched. A delivery of a webhook without rules is
// dispatched in its own ingest transaction (one commit stores and
// dispatches it: the run or incident exists when the sender hears 202).
// Measured on two cores shared with the load generator (BENCHMARKS.md),
// that is the cheapest way in CPU: leaving the dispatch to the dispatcher
// costs a second write of the event row (with its body), a read back and
// a commit of its own, about half as much CPU again per event. But a group
// commit's duration grows with its size, and every delivery in it waits
// for all of it; past inlineMax deliveries the writer only stores the
// events (status received, their dedupe and idempotency decisions made)
// and the dispatcher takes them from the durable queue in short
// transactions, so an overload lengthens the dispatch queue, not every
// acknowledgement.
//
// Order per webhook is kept: once any event was left to the dispatcher
// (backlog), every later one is too, until the dispatcher has found the
// queue empty with no deferred commit in between; the dispatcher takes
// events in received order. After a restart the queue may hold events, so
// a pipeline starts in backlog.
const (
	// inlineMax: the largest group commit whose events are still
	// dispatched inline when there is no backlog (about 0.15 ms of CPU
	// each: 1024 make a commit of about 150 ms).
	inlineMax = 1024
	// dispatchBudget: the time one dispatch transaction aims to hold the
	// writer connection, so deliveries waiting for their group commit
	// wait at most about this long behind it.
	dispatchBudget = 8 * time.Millisecond
	minDispatch    = 16
)

// admitInline reports whether a group commit of n deliveries may dispatch
// them inline; when not, the pipeline is in backlog from now on and a
// deferred commit is in flight until deferredDone.
func (p *Pipeline) admitInline(n int) bool {
	p.flowMu.Lock()
	defer p.flowMu.Unlock()
	if !p.backlog && n <= p.d.InlineMax {
		return true
	}
	p.backlog, p.deferring = true, true
	return false
}

// deferredDone ends a deferred commit (committed or failed).
func (p *Pipeline) deferredDone() {
	p.flowMu.Lock()
	p.deferring = false
	p.deferGen++
	p.flowMu.Unlock()
}

// flowGen is read before a dispatch pass looks at the queue.
func (p *Pipeline) flowGen() uint64 {
	p.flowMu.Lock()
	defer p.flowMu.Unlock()
	return p.deferGen
}

// queueEmpty is called when a pass that started at generation g found no
// pending event: the backlog ends unless a deferred commit ran meanwhile
// (its events may not have been visible to the pass).
func (p *Pipeline) queueEmpty(g uint64) {
	p.flowMu.Lock()
	if !p.deferring && p.deferGen == g {
		p.backlog = false
	}
	p.flowMu.Unlock()
}

// Backlog reports whether events are being left to the dispatcher (tests).
func (p *Pipeline) Backlog() bool {
	p.flowMu.Lock()
	defer p.flowMu.Unlock()
	return p.backlog
}

// nextBatch sizes the next dispatch transaction from the time the last one
// held the writer per event (its wait for the connection left out: behind
// a long group commit it would shrink the batches exactly when the queue
// grows), so that it holds the writer about dispatchBudget.
func (p *Pipeline) nextBatch(n int, took time.Duration) {
	if n == 0 {
		return
	}
	per := took / time.Duration(n)
	if per <= 0 {
		per = time.Microsecond
	}
	p.batchN = min(max(int(dispatchBudget/per), minDispatch), dispatchBatch)
}
