package store

import (
	"sync"
	"time"
)

// A webhook run that cannot start a model fails at once, and under
// overlap_policy skip the next alert starts another: with no LLM
// configured, an alert storm recorded a failed session per alert (tens a
// second), each saying the same thing, and buried the task's history. So
// when a run fails because no model is configured, the scheduler holds the
// org's webhook runs for a while (HoldWebhookRuns): events in that time
// are stored, correlated and opened as incidents as always, and their run
// is skipped with the reason on the event and the incident's timeline. The
// first alert after the hold tries again, so a missing model still shows as
// one failed run per hold, and setting the org's key releases it at once.
// Holds live in memory: a restart (which is how server-wide LLM settings
// change) clears them, and in a cluster each node learns from its own runs.

// RunHoldFor is how long a run that failed for want of a model holds the
// org's webhook runs.
const RunHoldFor = 30 * time.Second

type runHold struct {
	until  time.Time
	reason string
}

type runHolds struct {
	mu sync.Mutex
	m  map[string]runHold // org id -> hold
}

// HoldWebhookRuns skips the webhook runs of org until until, with reason on
// each skipped event.
func (db *DB) HoldWebhookRuns(orgID, reason string, until time.Time) {
	h := &db.runHolds
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]runHold{}
	}
	h.m[orgID] = runHold{until: until, reason: reason}
}

// ReleaseWebhookRuns ends org's hold (its model was just configured).
func (db *DB) ReleaseWebhookRuns(orgID string) {
	h := &db.runHolds
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.m, orgID)
}

// webhookRunHeld is the reason org's webhook runs are held at now ("" when
// they are not); an expired hold is dropped.
func (db *DB) webhookRunHeld(orgID string, now time.Time) string {
	h := &db.runHolds
	h.mu.Lock()
	defer h.mu.Unlock()
	hold, ok := h.m[orgID]
	if !ok {
		return ""
	}
	if !now.Before(hold.until) {
		delete(h.m, orgID)
		return ""
	}
	return hold.reason
}
