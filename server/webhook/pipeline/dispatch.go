package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/webhook"
	"github.com/opsagent/opsagent/store"
)

// Dispatcher limits.
const (
	dispatchBatch    = 1000
	dispatchInterval = time.Second
	// dispatchCoalesce is the pause after a pass that emptied the queue:
	// under load the next pass then takes hundreds of events in one
	// transaction instead of competing with the ingest writer for the
	// writer connection after every group commit.
	dispatchCoalesce = 20 * time.Millisecond
	maxRunInput      = 16 << 10 // bytes of alert JSON handed to the agent
)

// dispatcher moves acknowledged events to their outcome: it reads the
// durable queue (events still "received"), decides with the rules and the
// correlation what each starts, and applies the decisions in one
// transaction per batch. Reading the queue from the database rather than
// memory is what makes an event acknowledged just before a crash dispatch
// after the restart.
func (p *Pipeline) dispatcher(ctx context.Context) {
	t := time.NewTicker(dispatchInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-t.C:
		}
		p.archivePending(ctx)
		// Until the queue is empty: a pass that finds it empty is what
		// ends the backlog (flow.go). Each pass is one short transaction;
		// database/sql hands the writer connection to the group commit
		// waiting for it between two passes.
		for ctx.Err() == nil {
			n, err := p.dispatchOnce(ctx)
			if err != nil {
				if ctx.Err() == nil {
					p.log.Error("webhook dispatch", "err", err)
				}
				break
			}
			if n == 0 {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(dispatchCoalesce):
		}
	}
}

// DispatchAll runs the dispatcher once over the whole queue (tests and tools).
func (p *Pipeline) DispatchAll(ctx context.Context) error {
	p.archivePending(ctx)
	for {
		n, err := p.dispatchOnce(ctx)
		if err != nil || n == 0 {
			return err
		}
	}
}

// dispatchOnce dispatches the oldest pending events in one transaction
// sized by nextBatch and reports how many it took.
func (p *Pipeline) dispatchOnce(ctx context.Context) (int, error) {
	p.dispatchMu.Lock()
	defer p.dispatchMu.Unlock()
	g := p.flowGen()
	events, err := p.d.DB.PendingWebhookEvents(ctx, p.batchN)
	if err == nil && len(events) == 0 {
		p.queueEmpty(g)
	}
	if err != nil || len(events) == 0 {
		return 0, err
	}
	plans := make([]store.DispatchPlan, 0, len(events))
	for i := range events {
		e := &events[i]
		c, err := p.dispatchConfig(ctx, e.TaskID)
		if err != nil {
			return 0, err
		}
		plans = append(plans, p.plan(e, c.hook, c.rules))
	}
	outs, held, err := p.d.DB.ApplyDispatch(ctx, plans)
	if err != nil {
		return 0, err
	}
	p.nextBatch(len(events), held)
	runs := false
	for _, o := range outs {
		for _, it := range o.Items {
			runs = runs || (it.Kind == "run" && it.ID != "") // a skip starts nothing
		}
		if o.Resolved != nil {
			p.d.Archive(ctx, o.Resolved)
		}
	}
	if runs {
		p.d.WakeTasks()
	}
	if p.d.Dispatched != nil {
		p.d.Dispatched(ctx, outs)
	}
	return len(events), nil
}

// plan decides what one event starts.
func (p *Pipeline) plan(e *store.WebhookEvent, h *store.Webhook, rules []store.WebhookRule) store.DispatchPlan {
	if h == nil {
		p.takeParsed(e.ID)
		return store.DispatchPlan{Event: e, Error: "the webhook was removed before the event was dispatched"}
	}
	var hdr http.Header
	headers := func() http.Header {
		if hdr == nil {
			hdr = StoredHeaders(e.Headers)
		}
		return hdr
	}
	ev, handed := p.takeParsed(e.ID)
	switch {
	case handed:
	case e.Raw:
		ev = webhook.Event{Provider: webhook.Provider(e.Provider), Type: e.Type, Alerts: []webhook.Alert{}}
	default:
		parsed, err := webhook.Parse(webhook.Provider(e.Provider), headers(), e.Body)
		if err != nil {
			return store.DispatchPlan{Event: e, Error: "stored payload no longer parses: " + err.Error()}
		}
		ev = parsed
	}
	return p.planEvent(e, h, rules, ev, headers)
}

// planEvent decides what a parsed event of webhook h with rules starts.
// headers gives the delivery's headers to rule conditions (nil when there
// are no rules). Ingest uses it too, so that the writer dispatches events
// of webhooks without rules in its own transaction.
func (p *Pipeline) planEvent(e *store.WebhookEvent, h *store.Webhook, rules []store.WebhookRule, ev webhook.Event, headers func() http.Header) store.DispatchPlan {
	plan := store.DispatchPlan{Event: e, DropBody: h.MetadataOnly}
	if p.d.Windows != nil {
		at := e.ReceivedAt
		if at.IsZero() { // at ingest the event is not stamped yet
			at = p.d.Now()
		}
		plan.Window = p.d.Windows(e.OrgID, e.ProjectID, e.Provider, at, ev.Alerts)
	}
	plan.RenderInput = func() string { return runInput(e, ev) }
	if len(rules) == 0 {
		plan.Targets = []store.DispatchTarget{{TargetTaskID: h.TaskID}}
	} else {
		env := webhook.NewEnv(ev, e.Body, headers())
		specs := make([]webhook.RuleSpec, len(rules))
		for i, r := range rules {
			specs[i] = webhook.RuleSpec{Priority: r.Priority, Disabled: !r.Enabled, Continue: h.RoutingMode == RoutingFanOut}
			if r.Condition != "" {
				cond, err := p.condition(r)
				if err != nil {
					specs[i].Disabled = true
					continue
				}
				specs[i].Condition = cond
			}
		}
		matched, evalErr := webhook.SelectRules(specs, env)
		if evalErr != nil {
			p.log.Warn("webhook rule evaluation failed", "task_id", h.TaskID, "event_id", e.ID, "err", evalErr)
		}
		for _, i := range matched {
			r := rules[i]
			plan.Targets = append(plan.Targets, store.DispatchTarget{RuleID: r.ID, RuleName: r.Name, TargetTaskID: r.TargetTaskID,
				RequiresApproval: r.RequiresApproval, ApprovalTTL: time.Duration(h.ApprovalTTL) * time.Second})
		}
		plan.NoMatch = len(matched) == 0
	}
	if h.Correlate {
		plan.Correlation = correlation(ev, e.Alerts, time.Duration(h.CorrelationWindow)*time.Second)
	}
	return plan
}

// condition compiles a rule's condition once per rule version.
func (p *Pipeline) condition(r store.WebhookRule) (*webhook.Condition, error) {
	key := r.ID + "@" + store.TS(r.UpdatedAt)
	if c, ok := p.conds.Load(key); ok {
		return c.(*webhook.Condition), nil
	}
	c, err := webhook.CompileCondition(r.Condition)
	if err != nil {
		return nil, err
	}
	p.conds.Store(key, c)
	return c, nil
}

// runInput is what the agent receives after the task's prompt: the
// normalized alerts of the event, bounded.
func runInput(e *store.WebhookEvent, ev webhook.Event) string {
	var b strings.Builder
	b.WriteString("Webhook event " + ev.Type + " from " + e.Provider + " (event " + e.ID + ")")
	if e.ReplayOf != "" {
		b.WriteString(", a replay of event " + e.ReplayOf)
	}
	b.WriteString(".\nAlerts (normalized JSON):\n")
	var alerts []byte
	if e.Alerts != "" {
		// The event's stored alerts are json.Marshal of ev.Alerts:
		// indenting them gives what MarshalIndent would, without encoding
		// the alerts a second time.
		var buf bytes.Buffer
		if json.Indent(&buf, []byte(e.Alerts), "", "  ") == nil {
			alerts = buf.Bytes()
		}
	}
	if alerts == nil {
		alerts, _ = json.MarshalIndent(ev.Alerts, "", "  ")
	}
	if len(alerts) > maxRunInput {
		alerts = append(alerts[:maxRunInput], []byte("\n... (truncated)")...)
	}
	b.Write(alerts)
	return b.String()
}
