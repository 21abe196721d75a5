package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
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
	// maxTimelineAlerts: alerts an incident's timeline entry keeps per event.
	maxTimelineAlerts = 20
)

// dispatcher moves acknowledged events to their outcome: it reads the
// durable queue (events still "received"), decides with the rules and the
// correlation what each starts, and applies the decisions in one
// transaction per batch. Reading the queue from the database rather than
// memory is what makes an event acknowledged just before a crash dispatch
// after the restart.
func (w *webhookService) dispatcher(ctx context.Context) {
	t := time.NewTicker(dispatchInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		case <-t.C:
		}
		w.archivePending(ctx)
		for ctx.Err() == nil {
			n, err := w.dispatchOnce(ctx)
			if err != nil {
				if ctx.Err() == nil {
					w.s.log.Error("webhook dispatch", "err", err)
				}
				break
			}
			if n < dispatchBatch {
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

// DispatchWebhooks runs the dispatcher once over the whole queue (tests and tools).
func (s *Server) DispatchWebhooks(ctx context.Context) error {
	s.wh.archivePending(ctx)
	for {
		n, err := s.wh.dispatchOnce(ctx)
		if err != nil || n < dispatchBatch {
			return err
		}
	}
}

func (w *webhookService) dispatchOnce(ctx context.Context) (int, error) {
	w.dispatchMu.Lock()
	defer w.dispatchMu.Unlock()
	events, err := w.s.db.PendingWebhookEvents(ctx, dispatchBatch)
	if err != nil || len(events) == 0 {
		return 0, err
	}
	hooks := map[string]*store.Webhook{}
	rules := map[string][]store.WebhookRule{}
	plans := make([]store.DispatchPlan, 0, len(events))
	for i := range events {
		e := &events[i]
		h, ok := hooks[e.TaskID]
		if !ok {
			h, err = w.s.db.FindWebhookForIngest(ctx, e.TaskID)
			if err != nil && !store.IsNotFound(err) {
				return 0, err
			}
			hooks[e.TaskID] = h
			if h != nil {
				if rules[e.TaskID], err = w.s.db.FindWebhookRules(ctx, h.OrgID, h.ProjectID, h.TaskID); err != nil {
					return 0, err
				}
			}
		}
		plans = append(plans, w.plan(e, h, rules[e.TaskID]))
	}
	outs, err := w.s.db.ApplyDispatch(ctx, plans)
	if err != nil {
		return 0, err
	}
	runs := false
	for _, o := range outs {
		for _, it := range o.Items {
			runs = runs || it.Kind == "run"
		}
		if o.Resolved != nil {
			w.s.archiveIncident(ctx, o.Resolved)
		}
	}
	if runs {
		w.s.tasks.Wake()
	}
	return len(events), nil
}

// plan decides what one event starts.
func (w *webhookService) plan(e *store.WebhookEvent, h *store.Webhook, rules []store.WebhookRule) store.DispatchPlan {
	p := store.DispatchPlan{Event: e}
	if h == nil {
		w.takeParsed(e.ID)
		p.Error = "the webhook was removed before the event was dispatched"
		return p
	}
	var hdr http.Header
	headers := func() http.Header {
		if hdr == nil {
			hdr = http.Header{}
			var hm map[string]string
			_ = json.Unmarshal([]byte(e.Headers), &hm)
			for k, v := range hm {
				hdr.Set(k, v)
			}
		}
		return hdr
	}
	ev, handed := w.takeParsed(e.ID)
	switch {
	case handed:
	case e.Raw:
		ev = webhook.Event{Provider: webhook.Provider(e.Provider), Type: e.Type, Alerts: []webhook.Alert{}}
	default:
		parsed, err := webhook.Parse(webhook.Provider(e.Provider), headers(), e.Body)
		if err != nil {
			p.Error = "stored payload no longer parses: " + err.Error()
			return p
		}
		ev = parsed
	}
	return w.planEvent(e, h, rules, ev, headers)
}

// planEvent decides what a parsed event of webhook h with rules starts.
// headers gives the delivery's headers to rule conditions (nil when there
// are no rules). The ingest writer uses it too, to dispatch events of
// webhooks without rules in its own transaction.
func (w *webhookService) planEvent(e *store.WebhookEvent, h *store.Webhook, rules []store.WebhookRule, ev webhook.Event, headers func() http.Header) store.DispatchPlan {
	p := store.DispatchPlan{Event: e, DropBody: h.MetadataOnly}
	p.RenderInput = func() string { return runInput(e, ev) }
	if len(rules) == 0 {
		p.Targets = []store.DispatchTarget{{TargetTaskID: h.TaskID}}
	} else {
		env := webhook.NewEnv(ev, e.Body, headers())
		specs := make([]webhook.RuleSpec, len(rules))
		for i, r := range rules {
			specs[i] = webhook.RuleSpec{Priority: r.Priority, Disabled: !r.Enabled, Continue: h.RoutingMode == routingFanOut}
			if r.Condition != "" {
				cond, err := w.condition(r)
				if err != nil {
					specs[i].Disabled = true
					continue
				}
				specs[i].Condition = cond
			}
		}
		matched, evalErr := webhook.SelectRules(specs, env)
		if evalErr != nil {
			w.s.log.Warn("webhook rule evaluation failed", "task_id", h.TaskID, "event_id", e.ID, "err", evalErr)
		}
		for _, i := range matched {
			r := rules[i]
			p.Targets = append(p.Targets, store.DispatchTarget{RuleID: r.ID, RuleName: r.Name, TargetTaskID: r.TargetTaskID,
				RequiresApproval: r.RequiresApproval, ApprovalTTL: time.Duration(h.ApprovalTTL) * time.Second})
		}
		p.NoMatch = len(matched) == 0
	}
	if h.Correlate {
		p.Correlation = correlation(ev, e.Alerts, time.Duration(h.CorrelationWindow)*time.Second)
	}
	return p
}

// condition compiles a rule's condition once per rule version.
func (w *webhookService) condition(r store.WebhookRule) (*webhook.Condition, error) {
	key := r.ID + "@" + store.TS(r.UpdatedAt)
	if c, ok := w.conds.Load(key); ok {
		return c.(*webhook.Condition), nil
	}
	c, err := webhook.CompileCondition(r.Condition)
	if err != nil {
		return nil, err
	}
	w.conds.Store(key, c)
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
	alerts, _ := json.MarshalIndent(ev.Alerts, "", "  ")
	if len(alerts) > maxRunInput {
		alerts = append(alerts[:maxRunInput], []byte("\n... (truncated)")...)
	}
	b.Write(alerts)
	return b.String()
}

// correlation derives the incident keys and state of an event: group key
// where the provider batches alerts (Alertmanager), fingerprint otherwise;
// PagerDuty's incident events move the incident's status.
// alertsJSON is ev.Alerts already encoded (the event's stored alerts), "" if
// not at hand.
func correlation(ev webhook.Event, alertsJSON string, window time.Duration) *store.Correlation {
	c := &store.Correlation{Window: window, Severity: webhook.SeverityInfo, Title: ev.Type}
	seen := map[string]bool{}
	resolved := 0
	for i, a := range ev.Alerts {
		if fp := a.Fingerprint; fp == "" || !seen["alert:"+fp] { // an incident counts distinct alerts
			c.AlertCount++
			if fp != "" {
				seen["alert:"+fp] = true
				c.Fingerprints = append(c.Fingerprints, fp)
			}
		}
		k := ""
		switch {
		case a.GroupKey != "":
			k = "group:" + a.GroupKey
		case a.Fingerprint != "":
			k = "fp:" + a.Fingerprint
		}
		if k != "" && !seen[k] && len(c.Keys) < 50 {
			seen[k] = true
			c.Keys = append(c.Keys, k)
		}
		if i == 0 && a.Title != "" {
			c.Title = a.Title
		}
		if severityRank(a.Severity) > severityRank(c.Severity) {
			c.Severity = a.Severity
		}
		if a.Status == webhook.StatusResolved {
			resolved++
		} else {
			c.Firing = true
		}
	}
	switch {
	case ev.Type == "incident.acknowledged":
		c.Transition = store.IncidentAcknowledged
	case ev.Type == "incident.resolved":
		c.Transition = store.IncidentResolved
	case len(ev.Alerts) > 0 && resolved == len(ev.Alerts):
		c.Transition = store.IncidentResolved
	}
	if len(c.Keys) == 0 {
		return nil // nothing to correlate on: every event stands alone
	}
	if len(c.Title) > 200 {
		c.Title = c.Title[:200]
	}
	if alertsJSON != "" && len(ev.Alerts) <= maxTimelineAlerts {
		c.Alerts = alertsJSON // the same JSON: no second encoding per event
	} else {
		alerts, _ := json.Marshal(ev.Alerts[:min(len(ev.Alerts), maxTimelineAlerts)])
		c.Alerts = string(alerts)
	}
	return c
}

func severityRank(s string) int {
	switch s {
	case webhook.SeverityCritical:
		return 4
	case webhook.SeverityError:
		return 3
	case webhook.SeverityWarning:
		return 2
	case webhook.SeverityInfo:
		return 1
	}
	return 0
}

// conditionCache is the compiled conditions, keyed by rule id and version.
type conditionCache = sync.Map
