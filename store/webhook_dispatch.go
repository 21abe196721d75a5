package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

// DispatchTarget is one thing a webhook event should start: a run of
// TargetTaskID, or an approval first when RequiresApproval.
type DispatchTarget struct {
	RuleID           string // "" for the webhook's own task when it has no rules
	RuleName         string
	TargetTaskID     string
	RequiresApproval bool
	ApprovalTTL      time.Duration
	Input            string // the alert, as the agent receives it
}

// Correlation joins an event to an open incident of the project that
// shares one of Keys (group keys, fingerprints) and saw an alert within
// Window, instead of starting new work.
type Correlation struct {
	Keys       []string
	Window     time.Duration
	Title      string
	Severity   string
	AlertCount int
	// AlertCount is the event's alerts, a fingerprint repeated inside the
	// event counted once; Fingerprints are the distinct fingerprints. An
	// incident counts each fingerprint once however many deliveries repeat
	// it; alerts without one (AlertCount beyond len(Fingerprints)) count
	// each time.
	Fingerprints []string
	Firing       bool   // the event carries firing alerts (may open an incident)
	Transition   string // acknowledged or resolved when the provider says so
	Alerts       string // JSON for the timeline
}

// DispatchPlan is what the server decided for one received event; the
// store applies it atomically.
type DispatchPlan struct {
	Event       *WebhookEvent
	Targets     []DispatchTarget
	NoMatch     bool
	Correlation *Correlation
	DropBody    bool // metadata-only webhooks drop the body once dispatched
	Error       string
	// Window is the active maintenance window the event matched (window.go).
	Window *WindowMatch
	// RenderInput, when set, gives every target its Input; it is called
	// only when the event starts work, not when it joins an open incident
	// (most events of an alert storm), so the input is built only if used.
	RenderInput func() string
}

// DispatchItem is one entry of an event's "what it dispatched" list.
type DispatchItem struct {
	Kind   string `json:"kind"` // run, approval, incident
	ID     string `json:"id"`
	TaskID string `json:"task_id,omitempty"`
	RuleID string `json:"rule_id,omitempty"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// DispatchOutcome reports what applying a plan did.
type DispatchOutcome struct {
	EventID  string
	Status   string
	Items    []DispatchItem
	Resolved *Incident // an incident the provider resolved, for archiving
	Skipped  bool      // the event was already dispatched (another replay of the queue)
}

// ApplyDispatch applies plans in one transaction. Each event moves from
// received to its final status exactly once (guarded by its status), and
// each run it records carries a UNIQUE run key, so a crash between commit
// and anything later never dispatches an event twice. held is how long
// the transaction held the writer connection (from its first statement to
// its commit, without the wait for the connection): the dispatcher sizes
// its batches by it.
func (db *DB) ApplyDispatch(ctx context.Context, plans []DispatchPlan) (outs []DispatchOutcome, held time.Duration, err error) {
	var out []DispatchOutcome
	if err := db.prepareIngest(ctx); err != nil {
		return nil, 0, err
	}
	var began time.Time
	// Hot: the dispatcher runs a transaction like this after every few
	// group commits under load, and parsing the run, incident and
	// timeline statements again each time was an eighth of the CPU.
	err = db.writeHot(ctx, func(tx *Tx) error {
		began = time.Now()
		out = out[:0]
		st := newTxStmts(tx)
		if err := st.prefetchKeys(ctx, len(plans), func(i int) (string, *Correlation) {
			if p := plans[i]; p.Event != nil && p.Error == "" {
				return p.Event.ProjectID, p.Correlation
			}
			return "", nil
		}); err != nil {
			return err
		}
		for i := range plans {
			o, err := applyDispatchTx(ctx, st, &plans[i])
			if err != nil {
				return err
			}
			out = append(out, o)
		}
		return st.flushIncidents(ctx)
	})
	if !began.IsZero() {
		held = time.Since(began)
	}
	return out, held, err
}

func applyDispatchTx(ctx context.Context, st *txStmts, p *DispatchPlan) (DispatchOutcome, error) {
	tx := st.tx
	e := p.Event
	o := DispatchOutcome{EventID: e.ID, Items: []DispatchItem{}}
	var status string
	if err := st.queryRow(ctx, `SELECT status FROM webhook_events WHERE id = ?`, e.ID).Scan(&status); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			o.Skipped = true
			return o, nil
		}
		return o, err
	}
	if status != EventReceived {
		o.Skipped = true
		return o, nil
	}
	o, err := decideDispatchTx(ctx, st, p)
	if err != nil {
		return o, err
	}
	items, _ := json.Marshal(o.Items)
	q := `UPDATE webhook_events SET status = ?, dispatch = ?, error = ?, dispatched_at = ?`
	if p.DropBody {
		q += `, body = NULL`
	}
	_, err = st.exec(ctx, q+` WHERE id = ?`, o.Status, string(items), p.Error, st.ts(tx.Now), e.ID)
	return o, err
}

// decideDispatchTx carries out a plan for its event (joins or opens the
// incident, records runs, opens approvals) and returns the outcome; the
// caller writes the event's status and dispatch list. p.Targets is cleared
// when the event joins an open incident.
func decideDispatchTx(ctx context.Context, st *txStmts, p *DispatchPlan) (DispatchOutcome, error) {
	tx := st.tx
	e := p.Event
	if p.Window != nil && p.Window.Mode == WindowSuppress && p.Error == "" {
		return suppressOutcome(e, p.Window), nil
	}
	// Room for the incident's item and the targets': appended one by one
	// they grew the slice twice per event.
	o := DispatchOutcome{EventID: e.ID, Items: make([]DispatchItem, 0, 1+len(p.Targets)), Status: EventDispatched}
	st.noFollow() // entries follow only this event's own alert entry
	var inc *Incident
	if c := p.Correlation; c != nil && p.Error == "" {
		var joined bool
		var err error
		inc, joined, err = correlateTx(ctx, st, e, c)
		if err != nil {
			return o, err
		}
		if inc != nil {
			o.Items = append(o.Items, DispatchItem{Kind: "incident", ID: inc.ID, Status: inc.Status})
			if inc.Status == IncidentResolved {
				o.Resolved = inc
			}
		}
		// A replay that joins an incident nobody investigates yet (its
		// alerts were skipped: overlap_policy skip, a disabled task) is
		// dispatched: replaying a skipped event is how its run is started
		// once the task is free.
		if joined && (e.ReplayOf == "" || inc.SessionID != "") {
			o.Status = EventCorrelated
			p.Targets = nil
		}
	}
	switch {
	case p.Error != "":
		o.Status = EventFailed
	case p.NoMatch && o.Status != EventCorrelated:
		o.Status = EventNoMatch
	}
	// The input is rendered only for a target that records a run or opens
	// an approval: in an alert storm under overlap_policy skip most targets
	// are skipped, and rendering each event's input was a twentieth of the
	// dispatch.
	var input *string
	render := func() string {
		if input == nil {
			in := p.RenderInput()
			input = &in
		}
		return *input
	}
	approvals, skips := 0, 0
	for i := range p.Targets {
		it, err := dispatchTargetTx(ctx, st, e, &p.Targets[i], inc, p.RenderInput != nil, render)
		if err != nil {
			return o, err
		}
		switch {
		case it.Kind == "approval":
			approvals++
		case it.Status == EventSkipped:
			skips++
		}
		o.Items = append(o.Items, it)
	}
	switch {
	case approvals > 0 && approvals == len(p.Targets):
		o.Status = EventApprovalPending
	case skips > 0 && skips == len(p.Targets) && o.Status == EventDispatched:
		// Nothing started: the event says so (its items say why), and a
		// replay once the task is free dispatches it as a new event.
		o.Status = EventSkipped
	}
	return o, markObserveOnlyTx(ctx, tx, &o, p.Window)
}

// dispatchTargetTx records a run (or opens an approval) for one target;
// with rendered, its Input is render() and is set only when used.
func dispatchTargetTx(ctx context.Context, st *txStmts, e *WebhookEvent, t *DispatchTarget, inc *Incident,
	rendered bool, render func() string) (DispatchItem, error) {
	tx := st.tx
	useInput := func() {
		if rendered {
			t.Input = render()
		}
	}
	it := DispatchItem{TaskID: t.TargetTaskID, RuleID: t.RuleID}
	task, err := st.task(ctx, e.OrgID, e.ProjectID, t.TargetTaskID)
	if IsNotFound(err) {
		it.Kind, it.Status, it.Reason = "run", EventSkipped, "target task no longer exists"
		return it, nil
	}
	if err != nil {
		return it, err
	}
	if t.RequiresApproval {
		useInput()
		subject, _ := json.Marshal(map[string]any{"event_id": e.ID, "webhook_task_id": e.TaskID, "rule_id": t.RuleID,
			"target_task_id": t.TargetTaskID, "target_task_name": task.Name, "input": t.Input})
		a := &Approval{OrgID: e.OrgID, ProjectID: e.ProjectID, Kind: ApprovalWebhookEvent, Subject: string(subject),
			Title: "Run " + task.Name + " for a " + e.Provider + " event", Reason: "routing rule " + quoteName(t.RuleName) + " requires approval",
			RuleID: t.RuleID, EventID: e.ID, ExpiresAt: tx.Now.Add(t.ApprovalTTL)}
		if err := createApprovalTx(ctx, tx, a); err != nil {
			return it, err
		}
		it.Kind, it.ID, it.Status = "approval", a.ID, ApprovalPending
		if inc != nil {
			st.followUp(inc.ID, "approval", a.Title, `{"approval_id":"`+a.ID+`"}`)
		}
		return it, err
	}
	skip, activeID, err := st.webhookSkip(ctx, task)
	if err != nil {
		return it, err
	}
	if skip != "" {
		it.Kind, it.Status, it.Reason = "run", EventSkipped, skip
		if inc != nil {
			text, data := st.skipFollowUp(task.Name, skip, activeID)
			st.followUp(inc.ID, "skipped", text, data)
		}
		return it, nil
	}
	useInput()
	s, err := st.recordRun(ctx, task, "webhook:"+e.ID+":"+orDefault(t.RuleID, "task")+":"+task.ID, t.Input)
	if err != nil {
		return it, err
	}
	it.Kind, it.ID, it.Status, it.Reason = "run", s.ID, s.Status, s.Reason
	if inc != nil {
		if inc.SessionID == "" {
			// Written with the batch's counters (flushIncidents).
			st.setSession(inc, s.ID)
		}
		st.followUp(inc.ID, "session", "agent run of "+task.Name, `{"session_id":"`+s.ID+`"}`)
	}
	return it, nil
}

func quoteName(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// incidentDelta is what a dispatch batch adds to one incident's counters,
// written once when the batch ends rather than once per event.
// sessionID is the first run the batch started for an incident that had
// none (its session_id).
type incidentDelta struct {
	alerts, events int
	sessionID      string
}

func (s *txStmts) delta(incidentID string) *incidentDelta {
	d := s.counts[incidentID]
	if d == nil {
		d = &incidentDelta{}
		s.counts[incidentID] = d
	}
	return d
}

// flushIncidents writes the batch's buffered rows and counter deltas.
func (s *txStmts) flushIncidents(ctx context.Context) error {
	s.ending = true // the batch's end: nothing correlates after this flush
	if err := s.flushPending(ctx); err != nil {
		return err
	}
	for id, d := range s.counts {
		if _, err := s.exec(ctx, updateIncidentCounts, d.alerts, d.events, s.ts(s.tx.Now), s.ts(s.tx.Now), nullStr(d.sessionID), id); err != nil {
			return err
		}
	}
	return nil
}
