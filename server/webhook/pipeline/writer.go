package pipeline

import (
	"context"
	"sync"
	"time"

	"github.com/opsagent/opsagent/server/webhook"
	"github.com/opsagent/opsagent/store"
)

// ingestReq is one verified delivery waiting for the group commit, with
// its normalized form for the dispatcher.
type ingestReq struct {
	item   store.IngestItem
	parsed webhook.Event
	done   chan ingestRes
}

type ingestRes struct {
	res store.IngestResult
	err error
}

// maxHandOff bounds the parsed events waiting for the dispatcher.
const maxHandOff = 4 * queueSize

// handOff keeps the parsed form of the batch's events that wait for the
// dispatcher and reports whether there are any.
func (p *Pipeline) handOff(batch []ingestReq, res []store.IngestResult) (pending bool) {
	p.parsedMu.Lock()
	defer p.parsedMu.Unlock()
	for i, r := range batch {
		if res[i].Err != nil || res[i].Duplicate != "" || res[i].Dispatched != nil {
			continue
		}
		pending = true
		if len(p.parsed) < maxHandOff {
			p.parsed[res[i].ID] = r.parsed
		}
	}
	return pending
}

func (p *Pipeline) takeParsed(id string) (webhook.Event, bool) {
	p.parsedMu.Lock()
	defer p.parsedMu.Unlock()
	ev, ok := p.parsed[id]
	if ok {
		delete(p.parsed, id)
	}
	return ev, ok
}

// writer is the single ingest writer: it takes whatever deliveries are
// queued (up to maxBatch), stores them in one transaction, which the store
// commits with synchronous=FULL, then answers every waiter. Under load one
// fsync acknowledges hundreds of deliveries (group commit); idle, a lone
// delivery is committed at once without waiting for company.
func (p *Pipeline) writer(ctx context.Context) {
	batch := make([]ingestReq, 0, maxBatch)
	items := make([]store.IngestItem, 0, maxBatch)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	prev := 0              // deliveries in the previous commit
	var took time.Duration // how long it took
	gc := newGCBoost()
	defer gc.stop()
	for {
		batch, items = batch[:0], items[:0]
		select {
		case <-ctx.Done():
			p.drainQueue()
			return
		case <-gc.calmC():
			gc.check()
			continue
		case r := <-p.queue:
			batch = append(batch, r)
		}
	fill:
		for len(batch) < maxBatch {
			select {
			case r := <-p.queue:
				batch = append(batch, r)
			default:
				break fill
			}
		}
		// Group commit under load (the previous commit held several
		// deliveries): keep collecting while deliveries keep arriving, at
		// most gap apart and linger in all. A commit's own CPU (about
		// 0.7 ms here: a dozen hot pages written to the WAL, an fsync)
		// dwarfs a delivery's share (about 15 µs; see store's
		// BenchmarkIngestGroupCommit), so on a busy machine waiting a few
		// milliseconds cuts the CPU per delivery and raises throughput; the
		// writer sleeps meanwhile. Idle, a lone delivery commits at once.
		// A commit that itself took longer than linger (events dispatched
		// in it: about 0.15 ms each) already let the next batch gather
		// while it ran, and lingering would only add to every delivery's
		// wait.
		if prev > 1 && took < linger {
			deadline := time.Now().Add(linger)
		wait:
			for len(batch) < maxBatch {
				if len(p.queue) == 0 && p.arriving.Load() == 0 {
					// Nothing is on its way (all the senders wait for
					// this commit, or there are few): waiting would only
					// add to their wait. Under a heavy load deliveries
					// keep arriving and the batch keeps growing.
					break
				}
				d := min(gap, time.Until(deadline))
				if d <= 0 {
					break
				}
				timer.Reset(d)
				select {
				case r := <-p.queue:
					batch = append(batch, r)
					timer.Stop()
				case <-timer.C:
					break wait
				}
			}
		}
		prev = len(batch)
		inline := p.admitInline(len(batch))
		for _, r := range batch {
			it := r.item
			if !inline {
				it.Plan = nil // the dispatcher's (flow.go)
			}
			items = append(items, it)
		}
		// A context that cannot end: the batch must commit or fail on its
		// own (its senders wait for the outcome, even during shutdown), and
		// a cancellable one costs the driver a watcher goroutine for every
		// statement, a large share of the writer's CPU.
		started := time.Now()
		res, err := p.d.DB.InsertWebhookEvents(context.WithoutCancel(ctx), items)
		took = time.Since(started)
		gc.committed(len(batch))
		if !inline {
			p.deferredDone()
		}
		var pending bool
		if err == nil {
			p.report(res, took)
			pending = p.handOff(batch, res) // before the waiters hear, so before any dispatch
		}
		for i, r := range batch {
			if err != nil {
				r.done <- ingestRes{err: err}
				continue
			}
			r.done <- ingestRes{res: res[i]}
		}
		if err != nil {
			p.log.Error("webhook ingest commit failed", "events", len(batch), "err", err)
			continue
		}
		p.dispatched(res)
		if pending {
			p.kick()
		}
	}
}

// report tells telemetry what one group commit stored.
func (p *Pipeline) report(res []store.IngestResult, took time.Duration) {
	accepted := 0
	for _, r := range res {
		switch {
		case r.Err != nil:
		case r.Duplicate != "":
			p.d.Telemetry.Duplicate()
		default:
			accepted++
		}
	}
	p.d.Telemetry.Accepted(accepted)
	p.d.Telemetry.BatchCommitted(len(res), took)
}

// dispatched follows up on events dispatched in the ingest transaction:
// the task scheduler hears of new runs, and incidents a provider resolved
// are archived by the dispatcher goroutine (never on the writer's).
func (p *Pipeline) dispatched(res []store.IngestResult) {
	runs, archive := false, false
	for _, r := range res {
		if r.Dispatched == nil {
			continue
		}
		for _, it := range r.Dispatched.Items {
			runs = runs || (it.Kind == "run" && it.ID != "") // a skip starts nothing
		}
		if r.Dispatched.Resolved != nil {
			p.parsedMu.Lock()
			p.archive = append(p.archive, r.Dispatched.Resolved)
			p.parsedMu.Unlock()
			archive = true
		}
	}
	if runs {
		p.d.WakeTasks()
	}
	if archive {
		p.kick()
	}
}

// archivePending archives the incidents the writer resolved.
func (p *Pipeline) archivePending(ctx context.Context) {
	p.parsedMu.Lock()
	incs := p.archive
	p.archive = nil
	p.parsedMu.Unlock()
	for _, inc := range incs {
		p.d.Archive(ctx, inc)
	}
}

// drainQueue answers deliveries still queued at stop; they were never
// acknowledged, so the sender retries.
func (p *Pipeline) drainQueue() {
	for {
		select {
		case r := <-p.queue:
			r.done <- ingestRes{err: errStopped}
		default:
			return
		}
	}
}

var errStopped = &store.Error{Code: store.EInternal, Message: "the server is stopping; retry the delivery"}

// submit queues a delivery and waits until it is committed. The delivery
// was counted in arriving (Ingest); submit counts it off once it is queued.
func (p *Pipeline) submit(ctx context.Context, item store.IngestItem, parsed webhook.Event) (store.IngestResult, error) {
	p.mu.Lock()
	running := p.running
	p.mu.Unlock()
	if !running {
		p.arriving.Add(-1)
		// Not started (tools that build a server without Serve): commit directly.
		res, err := p.d.DB.InsertWebhookEvents(ctx, []store.IngestItem{item})
		if err != nil {
			return store.IngestResult{}, err
		}
		p.dispatched(res)
		return res[0], nil
	}
	done := doneChans.Get().(chan ingestRes)
	req := ingestReq{item: item, parsed: parsed, done: done}
	select {
	case p.queue <- req:
		p.arriving.Add(-1) // after the send: counted or queued, never neither
	case <-ctx.Done():
		p.arriving.Add(-1)
		doneChans.Put(done)
		return store.IngestResult{}, ctx.Err()
	}
	// Once queued, wait for the commit even if the client went away: the
	// outcome must be known before anything else is said about this event.
	r := <-done
	doneChans.Put(done) // the writer answers a delivery once: empty again
	return r.res, r.err
}

// doneChans are the answer channels of submit: the writer sends exactly
// one answer per queued delivery, which submit receives, so a channel is
// empty and unreferenced when it goes back.
var doneChans = sync.Pool{New: func() any { return make(chan ingestRes, 1) }}
