package store

import (
	"context"
	"fmt"
	"sync"
)

// groupCommit runs concurrent requests of one kind in shared write
// transactions: a request arriving while a transaction is being written
// joins the next one, so under load one fsync'd commit serves many callers
// (as webhook ingest does), and a lone request commits at once.
//
// There is no goroutine of its own: the first caller to find no commit in
// progress leads, commits the queue as one batch and, when more requests
// queued meanwhile, hands the lead to the oldest of them. Every caller
// returns only after the transaction holding its request committed (or
// failed, and then every request of that batch fails: nothing partial).
type groupCommit[Req, Res any] struct {
	mu      sync.Mutex
	queue   []*gcWaiter[Req, Res]
	leading bool
	// max bounds one batch, so that a transaction stays short.
	max int
	// run handles a batch inside one transaction; res[i] answers reqs[i].
	// It may run again for the same batch when the file was busy (Write
	// retries), so it must not keep state between runs.
	run func(ctx context.Context, tx *Tx, reqs []Req, res []Res) error
}

type gcWaiter[Req, Res any] struct {
	req  Req
	res  Res
	err  error
	done chan bool // true: committed (res/err set); false: lead the next batch
}

func (g *groupCommit[Req, Res]) do(ctx context.Context, db *DB, req Req) (Res, error) {
	w := &gcWaiter[Req, Res]{req: req, done: make(chan bool, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, w)
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	if !lead && <-w.done {
		return w.res, w.err
	}
	// Leading: take up to max queued requests (this one among them, as the
	// oldest), commit them, answer them, pass the lead on.
	g.mu.Lock()
	n := min(len(g.queue), max(g.max, 1))
	batch := g.queue[:n:n]
	g.queue = g.queue[n:]
	g.mu.Unlock()
	reqs := make([]Req, len(batch))
	for i, b := range batch {
		reqs[i] = b.req
	}
	res := make([]Res, len(batch))
	// The batch commits or fails as a whole, whatever happens to the
	// leader's own caller meanwhile: the others wait on this outcome.
	wctx := context.WithoutCancel(ctx)
	err := db.writeHot(wctx, func(tx *Tx) (err error) {
		// A panic must not strand the followers (they wait on this leader),
		// keep the lead taken or the writer's transaction open: it fails
		// the batch (rolled back) like any error.
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("store: group commit: %v", r)
			}
		}()
		clear(res)
		return g.run(wctx, tx, reqs, res)
	})
	g.mu.Lock()
	var next *gcWaiter[Req, Res]
	if len(g.queue) > 0 {
		next = g.queue[0]
	} else {
		g.leading = false
	}
	g.mu.Unlock()
	for i, b := range batch {
		if b == w {
			continue
		}
		b.res, b.err = res[i], err
		b.done <- true
	}
	if next != nil {
		next.done <- false
	}
	for i, b := range batch {
		if b == w {
			return res[i], err
		}
	}
	panic("groupCommit: the leader's request was not in its batch")
}
