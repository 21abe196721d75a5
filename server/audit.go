package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/opsagent/opsagent/store"
)

// auditWriter appends audit events from one goroutine in batches.
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
type auditWriter struct {
	db     *store.DB
	log    *slog.Logger
	ch     chan auditItem
	done   chan struct{}
	mu     sync.RWMutex
	closed bool
}

type auditItem struct {
	rec     *store.AuditRecord
	barrier chan struct{}
}

const (
	auditQueue    = 4096
	auditMaxBatch = 256
)

func newAuditWriter(db *store.DB, log *slog.Logger) *auditWriter {
	w := &auditWriter{db: db, log: log, ch: make(chan auditItem, auditQueue), done: make(chan struct{})}
	go w.run()
	return w
}

func (w *auditWriter) run() {
	defer close(w.done)
	for first := range w.ch {
		batch := []auditItem{first}
	drain:
		for len(batch) < auditMaxBatch {
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

func (w *auditWriter) commit(batch []auditItem) {
	var recs []*store.AuditRecord
	for _, it := range batch {
		if it.rec != nil {
			recs = append(recs, it.rec)
		}
	}
	if len(recs) > 0 {
		var err error
		for attempt := 0; attempt < 3; attempt++ {
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
func (w *auditWriter) Enqueue(rec *store.AuditRecord) {
	w.mu.RLock()
	if !w.closed {
		w.ch <- auditItem{rec: rec}
		w.mu.RUnlock()
		return
	}
	w.mu.RUnlock()
	w.commit([]auditItem{{rec: rec}})
}

// Flush waits until every event queued before it is committed.
func (w *auditWriter) Flush(ctx context.Context) error {
	b := make(chan struct{})
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return nil
	}
	w.ch <- auditItem{barrier: b}
	w.mu.RUnlock()
	select {
	case <-b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close drains the queue and stops the goroutine; it is safe to call twice.
func (w *auditWriter) Close() {
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

// writeAudit is the audit hook: it stamps the event with the server clock
// and queues it. It never fails the request.
func (s *Server) writeAudit(ctx context.Context, e AuditEvent) {
	markAudited(ctx)
	if e.OrgID == "" && e.ActorUserID != "" {
		// Events before an org is chosen (failed sign-ins, second factors)
		// belong to the user's current org, where its admins will look.
		if u, err := s.db.FindUserByID(ctx, e.ActorUserID); err == nil {
			e.OrgID = u.CurrentOrgID
		}
	}
	if e.OrgID == "" {
		// No tenant to file it under (an unknown address): the log keeps it.
		loggerFrom(ctx).Info("audit", "action", e.Action, "outcome", e.Outcome, "ip", e.IP, "target", e.TargetID)
		return
	}
	detail := "{}"
	if len(e.Detail) > 0 {
		if b, err := json.Marshal(e.Detail); err == nil {
			detail = string(b)
		}
	}
	s.auditLog.Enqueue(&store.AuditRecord{ID: store.NewID(), OrgID: e.OrgID, ProjectID: e.ProjectID, ActorUserID: e.ActorUserID,
		ActorKeyID: e.ActorKeyID, Action: e.Action, Outcome: e.Outcome, TargetType: e.TargetType, TargetID: e.TargetID,
		IP: e.IP, UserAgent: e.UserAgent, Detail: detail, CreatedAt: s.Now()})
}
