package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/webhook/pipeline"
	"github.com/opsagent/opsagent/store"
)

// Group commits larger than InlineMax leave their events to the
// dispatcher: every acknowledged event is still dispatched exactly once
// (one run each), and once the queue is empty a lone delivery is
// dispatched in its own ingest transaction again.
func TestLoadedBatchesDispatchFromTheQueue(t *testing.T) {
	t.Parallel()
	// Up to five bursts of 120 plus one: above the default 600 a minute.
	e := newEnv(t, func(h *store.Webhook) { h.DedupeSeconds, h.Correlate, h.RateLimit = 0, false, 100000 })
	d := e.deps
	d.InlineMax = 1
	e.p = pipeline.New(d)
	stop := e.p.Start()
	defer stop()
	ctx := context.Background()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !ok(); {
			if time.Now().After(deadline) {
				t.Fatalf("still waiting after 30s: %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("the first empty queue", func() bool { return !e.p.Backlog() })

	// A burst leaves events to the dispatcher only when the group commit
	// gathers more than InlineMax of them at once; on a loaded machine the
	// deliveries can arrive one by one, so a few bursts are allowed.
	const n = 120
	filter := store.WebhookEventFilter{OrgID: e.org, ProjectID: e.project, TaskID: e.task, Limit: 1000}
	runs, deferred := map[string]bool{}, 0
	for burst := 1; burst <= 5 && deferred == 0; burst++ {
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := e.ingest(t, signed(), alert(fmt.Sprint("g", burst, "-", i), "firing")); err != nil {
					t.Errorf("delivery %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		waitFor("every event dispatched", func() bool {
			f := filter
			f.Status = store.EventReceived
			_, left, err := e.db.FindWebhookEvents(ctx, f)
			return err == nil && left == 0
		})
		events, total, err := e.db.FindWebhookEvents(ctx, filter)
		if err != nil || total != n*burst {
			t.Fatalf("%d events (%v), want %d", total, err, n*burst)
		}
		clear(runs)
		for _, ev := range events {
			var items []store.DispatchItem
			if err := json.Unmarshal([]byte(ev.Dispatch), &items); err != nil || len(items) != 1 || items[0].Kind != "run" || runs[items[0].ID] {
				t.Fatalf("event %s (%s) dispatched %s", ev.ID, ev.Status, ev.Dispatch)
			}
			runs[items[0].ID] = true
			if ev.DispatchedAt != nil && ev.DispatchedAt.After(ev.ReceivedAt) {
				deferred++ // dispatched in a later transaction than its own
			}
		}
	}
	if deferred == 0 {
		t.Fatal("no event was left to the dispatcher")
	}

	waitFor("the backlog to end", func() bool { return !e.p.Backlog() })
	ack, err := e.ingest(t, signed(), alert("lone", "firing"))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := e.db.FindWebhookEvent(ctx, e.org, e.project, e.task, ack.EventID)
	if err != nil || ev.Status != store.EventDispatched {
		t.Fatalf("a lone delivery after the backlog: %+v %v", ev, err)
	}
}
