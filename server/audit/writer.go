// Package audit is the audit log's writer: it appends events in batches
// from one goroutine, which alone extends each org's hash chain.
//
// It imports store only; the HTTP side (server) turns requests into
// records and calls Enqueue, and the audit routes call Flush before they read.
package audit

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/opsagent/opsagent/store"
)

// Appender stores a batch of records in one transaction, chaining each to
// the last event of its org (*store.DB does).
type Appender interface {
	AppendAudit(ctx context.Context, events []*store.AuditRecord) error
}

// Writer appends audit events from one goroutine in batches.
//
// Why a buffered writer rather than writing inside each handler's
// transaction: the database has one writer connection, and the events that
// matter most (failed sign-ins, permission denials, reads by keys from a new
// address) have no transaction of their own. Queuing costs the request
// nothing; the goroutine commits whatever accumulated in one transaction, so
// a burst of requests costs one fsync, and it alone computes the hash chain,
// so chains never fork. Durability: events are committed within
// milliseconds, Flush is a barrier (the audit routes call it, so a reader
// sees every event written before its request), and Close drains the queue
// at shutdown. A full queue blocks the caller (back-pressure) rather than
// dropping events; a failed commit is retried, then the events are logged.
type Writer struct {
	db     Appender
	log    *slog.Logger
	ch     chan item
	done   chan struct{}
	mu     sync.RWMutex
	closed bool
}

type item struct {
	rec     *store.AuditRecord
	barrier chan struct{}
}

const (
	queueSize = 4096
	maxBatch  = 256
	attempts  = 3
)

// New starts a writer over db; Close stops it.
func New(db Appender, log *slog.Logger) *Writer {
	if log == nil {
		log = slog.Default()
	}
	w := &Writer{db: db, log: log, ch: make(chan item, queueSize), done: make(chan struct{})}
	go w.run()
	return w
}

func (w *Writer) run() {
	defer close(w.done)
	for first := range w.ch {
		batch := []item{first}
	drain:
		for len(batch) < maxBatch {
			select {
			case it, ok := <-w.ch:
				if !ok {
					break drain
				}
				batch = append(batch, it)
			default:
				break drain
			}
		}
		w.commit(batch)
	}
}

func (w *Writer) commit(batch []item) {
	var recs []*store.AuditRecord
	for _, it := range batch {
		if it.rec != nil {
			recs = append(recs, it.rec)
		}
	}
	if len(recs) > 0 {
		var err error
		for attempt := 0; attempt < attempts; attempt++ {
			// Its own context: an event outlives the request that caused it.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err = w.db.AppendAudit(ctx, recs)
			cancel()
			if err == nil {
				break
			}
			time.Sleep(time.Duration(attempt+1) * 50 * time.Millisecond)
		}
		if err != nil {
			for _, r := range recs {
				w.log.Error("audit event not stored", "err", err, "org_id", r.OrgID, "action", r.Action, "outcome", r.Outcome,
					"actor_user_id", r.ActorUserID, "actor_key_id", r.ActorKeyID, "target_id", r.TargetID)
			}
		}
	}
	for _, it := range batch {
		if it.barrier != nil {
			close(it.barrier)
		}
	}
}

// Enqueue queues rec; after Close it is written synchronously.
func (w *Writer) Enqueue(rec *store.AuditRecord) {
	w.mu.RLock()
	if !w.closed {
		w.ch <- item{rec: rec}
		w.mu.RUnlock()
		return
	}
	w.mu.RUnlock()
	w.commit([]item{{rec: rec}})
}

// Flush waits until every event queued before it is committed.
func (w *Writer) Flush(ctx context.Context) error {
	b := make(chan struct{})
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return nil
	}
	w.ch <- item{barrier: b}
	w.mu.RUnlock()
	select {
	case <-b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close drains the queue and stops the goroutine; it is safe to call twice.
func (w *Writer) Close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	close(w.ch)
	w.mu.Unlock()
	<-w.done
}
