package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
)

// Webhook event statuses.
const (
	EventReceived        = "received" // durably stored and acknowledged; dispatch pending
	EventDispatched      = "dispatched"
	EventNoMatch         = "no_match"         // rules exist and none matched
	EventApprovalPending = "approval_pending" // a requires_approval rule opened an approval
	EventCorrelated      = "correlated"       // joined an open incident; no new run
	// EventSkipped: every run the event would start was skipped (overlap_policy
	// skip with a run in progress, or a disabled task); the event's dispatch
	// items say why. No session is recorded for a webhook skip: an alert storm
	// would otherwise fill the task's history with cancelled sessions.
	EventSkipped = "skipped"
	EventFailed  = "failed"
)

// WebhookEvent is one stored delivery. Headers, Alerts and Dispatch are JSON
// text the server encodes; Body is the redacted payload (nil when the
// webhook keeps metadata only and the event was dispatched).
type WebhookEvent struct {
	ID           string
	OrgID        string
	ProjectID    string
	TaskID       string
	ReceivedAt   time.Time
	Provider     string
	Type         string
	IdemKey      string
	BodyHash     string
	Verification string
	Headers      string
	Body         []byte
	BodySize     int
	Raw          bool
	Alerts       string
	Status       string
	Dispatch     string
	Error        string
	ReplayOf     string
	Test         bool
	DispatchedAt *time.Time
	// BodyKept says whether the body is stored; list rows (loaded without
	// bodies) carry it even though Body is nil there.
	BodyKept bool
}

const webhookEventCols = `id, org_id, project_id, task_id, received_at, provider, event_type, idem_key, body_hash,
	verification, headers, body, body_size, raw, alerts, status, dispatch, error, replay_of, test, dispatched_at`

func scanWebhookEvent(row interface{ Scan(...any) error }) (*WebhookEvent, error) {
	var e WebhookEvent
	var received string
	var idem, replay, dispatched sql.NullString
	err := row.Scan(&e.ID, &e.OrgID, &e.ProjectID, &e.TaskID, &received, &e.Provider, &e.Type, &idem, &e.BodyHash,
		&e.Verification, &e.Headers, &e.Body, &e.BodySize, &e.Raw, &e.Alerts, &e.Status, &e.Dispatch, &e.Error, &replay,
		&e.Test, &dispatched)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("webhook event")
	}
	if err != nil {
		return nil, err
	}
	e.ReceivedAt, e.IdemKey, e.ReplayOf, e.DispatchedAt = ParseTS(received), idem.String, replay.String, scanNullTS(dispatched)
	e.BodyKept = e.Body != nil
	return &e, nil
}

// webhookEventMetaCols are the columns of a list row: the body is replaced
// by a one-byte marker that is present exactly when the body is kept, so
// BodyKept agrees with the detail without reading the body.
var webhookEventMetaCols = strings.Replace(webhookEventCols, "body,", "CASE WHEN body IS NULL THEN NULL ELSE X'01' END,", 1)

// scanWebhookEventMeta scans a row selected with webhookEventMetaCols.
func scanWebhookEventMeta(row interface{ Scan(...any) error }) (*WebhookEvent, error) {
	e, err := scanWebhookEvent(row)
	if e != nil {
		e.Body = nil
	}
	return e, err
}

// IngestItem is one verified delivery waiting for the group commit.
type IngestItem struct {
	Event *WebhookEvent
	// DedupeWindow: an event with the same body hash stored this recently
	// makes this one a duplicate (0 = no dedupe; replays and tests skip it).
	DedupeWindow time.Duration
	// Plan, when set, is dispatched in the ingest transaction itself (one
	// commit stores and dispatches the event) provided the webhook has no
	// routing rules and is still the version the plan was made from
	// (HookUpdatedAt); otherwise the event waits for the dispatcher, which
	// reads the rules and the configuration afresh.
	Plan          *DispatchPlan
	HookUpdatedAt time.Time
}

// IngestResult says what happened to one IngestItem.
type IngestResult struct {
	ID        string // the stored event, or the earlier one this duplicates
	Duplicate string // "" when stored; idempotency_key or dedupe when not
	Err       error  // NotFound when the webhook or task was disabled or deleted meanwhile
	// Dispatched is the outcome when the event was dispatched in the ingest
	// transaction; nil when it waits for the dispatcher (status received).
	Dispatched *DispatchOutcome
}

// ingestHook is what the ingest transaction knows of one webhook.
type ingestHook struct {
	live      bool
	updatedAt string
	hasRules  bool
}

// The ingest transaction's statements, prepared once on the writer
// connection: parsing them again for every group commit cost more than
// a tenth of the writer's CPU.
const (
	// insertWebhookEvent is one event's row; the group commit writes its
	// events several rows per statement (flushEventHead).
	insertWebhookEvent = `INSERT INTO webhook_events (` + webhookEventCols + `, dedupe_key)
	VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`
	queryIdemKey = `SELECT id FROM webhook_events WHERE task_id = ? AND idem_key = ?`
)

// ingestStmts are prepared before the ingest transaction.
var ingestStmts = []string{queryIdemKey,
	queryOpenIncidentByKey, insertIncidentKey, insertTimeline, updateIncidentCounts}

// InsertWebhookEvents stores a batch of deliveries in ONE transaction (the
// group commit of the ingest writer), so one synced commit acknowledges
// them all. Idempotency keys and the dedupe window are checked against the
// database and against earlier items of the same batch, which is what makes
// a hundred simultaneous copies of one delivery store exactly one event.
// Items with a Plan are dispatched in the same transaction when their
// webhook allows it (see IngestItem), so storing and dispatching them is
// one atomic step: exactly once across a crash by construction.
// A per-item problem is reported in its result; only a database failure
// fails the call (and then nothing was stored).
func (db *DB) InsertWebhookEvents(ctx context.Context, items []IngestItem) ([]IngestResult, error) {
	out := make([]IngestResult, len(items))
	mem := db.dedupeMemory() // nil on PostgreSQL
	if err := db.prepareIngest(ctx); err != nil {
		return nil, err
	}
	err := db.writeHot(ctx, func(tx *Tx) error {
		st := newTxStmts(tx)
		// About one key, one incident and one probe per delivery in a storm:
		// sized once instead of grown (and rehashed) as the batch fills them.
		st.open = make(map[string]*Incident, len(items))
		st.pending = make(map[string]*pendingIncident, len(items))
		st.probed = make(map[string]bool, len(items))
		// The inline dispatch's correlation keys, looked up at once
		// (dispatch), with the other prefetch queries (prefetchIngest).
		st.queueKeys(len(items), func(i int) (string, *Correlation) {
			if p := items[i].Plan; p != nil && p.Error == "" {
				return items[i].Event.ProjectID, p.Correlation
			}
			return "", nil
		})
		// The stored events the batch's deliveries may duplicate.
		dedupe, err := newIngestDedupe(ctx, st, mem, items)
		if err != nil {
			return err
		}
		// The batch's event rows, inserted at its end in multi-row
		// statements (flushEventHead).
		events := make([]any, 0, flushEventCols*len(items))
		hooks := map[string]ingestHook{}
		if err := st.prefetchIngest(ctx, items, hooks); err != nil {
			return err
		}
		// Keyed by task and key or hash as a pair: no string built per event.
		byKey := map[[2]string]string{}
		byHash := map[[2]string]string{}
		now := TS(tx.Now)
		var hookAt tsMemo // the batch's deliveries mostly carry a few hooks' times
		var box rowBoxes
		var dispatchBuf []byte // appendDispatchItems', reused
		for i, it := range items {
			e := it.Event
			out[i] = IngestResult{}
			h := hooks[e.TaskID] // prefetchIngest
			if !h.live {
				out[i].Err = NotFound("webhook")
				continue
			}
			if e.IdemKey != "" {
				k := [2]string{e.TaskID, e.IdemKey}
				if id, hit := byKey[k]; hit {
					out[i] = IngestResult{ID: id, Duplicate: "idempotency_key"}
					continue
				}
				var id string
				err := st.queryRow(ctx, queryIdemKey, e.TaskID, e.IdemKey).Scan(&id)
				if err == nil {
					byKey[k] = id
					out[i] = IngestResult{ID: id, Duplicate: "idempotency_key"}
					continue
				} else if !errors.Is(err, sql.ErrNoRows) {
					return err
				}
			}
			if it.DedupeWindow > 0 {
				k := [2]string{e.TaskID, e.BodyHash}
				if id, hit := byHash[k]; hit {
					out[i] = IngestResult{ID: id, Duplicate: "dedupe"}
					continue
				}
				if id, err := dedupe.duplicateOf(ctx, st, e, it.DedupeWindow); err != nil {
					return err
				} else if id != "" {
					byHash[k] = id
					out[i] = IngestResult{ID: id, Duplicate: "dedupe"}
					continue
				}
			}
			// A new delivery counts against the org's monthly event quota
			// (test deliveries and replays are not new events).
			if !e.Test && e.ReplayOf == "" {
				if err := tx.CheckQuota(ctx, QuotaWebhookEvents, e.OrgID, 1); IsQuotaError(err) {
					out[i].Err = err
					continue
				} else if err != nil {
					return err
				}
			}
			if e.ID == "" {
				e.ID = NewID()
			}
			e.ReceivedAt = tx.Now
			// Local copies: Write may run this function again after BUSY.
			status, dispatch, errText, body, dispatchedAt := e.Status, e.Dispatch, e.Error, e.Body, nullTS(e.DispatchedAt)
			if status == "" {
				status = EventReceived
			}
			var key any // in the dedupe index only when this delivery was deduplicated and memory does not hold it
			if it.DedupeWindow > 0 {
				key = dedupe.dedupeKeyOf(e, it.DedupeWindow)
			}
			if it.Plan != nil && !h.hasRules && status == EventReceived && h.updatedAt == hookAt.ts(it.HookUpdatedAt) {
				p := *it.Plan
				p.Event = e
				p.Targets = append([]DispatchTarget(nil), p.Targets...)
				o, err := decideDispatchTx(ctx, st, &p)
				if err != nil {
					return err
				}
				dispatchBuf = appendDispatchItems(dispatchBuf[:0], o.Items)
				status, dispatch, errText, dispatchedAt = o.Status, string(dispatchBuf), p.Error, box.str(boxNow, now)
				if p.DropBody {
					body = nil
				}
				out[i].Dispatched = &o
			}
			events = append(events, e.ID, box.str(boxOrg, e.OrgID), box.str(boxProject, e.ProjectID),
				box.str(boxTask, e.TaskID), box.str(boxNow, now), box.str(boxProvider, e.Provider), box.str(boxType, e.Type),
				nullStr(e.IdemKey), e.BodyHash, box.str(boxVerification, e.Verification),
				box.str(boxHeaders, orJSON(e.Headers, "{}")), body, int64(e.BodySize), e.Raw, orJSON(e.Alerts, "[]"),
				box.str(boxStatus, status), orJSON(dispatch, "[]"), box.str(boxError, errText), nullStr(e.ReplayOf), e.Test,
				dispatchedAt, key)
			out[i].ID = e.ID
			if e.IdemKey != "" {
				byKey[[2]string{e.TaskID, e.IdemKey}] = e.ID
			}
			if it.DedupeWindow > 0 {
				byHash[[2]string{e.TaskID, e.BodyHash}] = e.ID
			}
		}
		if err := st.insertRows(ctx, flushEventHead, flushEventCols, events); err != nil {
			return err
		}
		return st.flushIncidents(ctx)
	})
	if err != nil {
		return nil, err
	}
	db.noteIngested(len(items)) // PostgreSQL: a fresh database's first statistics (pg_analyze.go)
	return out, nil
}

// dedupeKey is the dedupe index's key of a body hash (lowercase hex, as
// ingest writes it): its first 15 hex digits as a number, 60 bits so that
// it is positive in both engines' 64-bit integers. Migration 0150 computes
// the same in SQL for the rows stored before it; keep the two in step. A
// non-hex digit counts as -1, as the migration's instr() - 1 does.
func dedupeKey(bodyHash string) int64 {
	var k int64
	for i := 0; i < 15; i++ {
		d := int64(0) // past the end: substr() is '', which instr() finds at 1
		if i < len(bodyHash) {
			switch c := bodyHash[i]; {
			case c >= '0' && c <= '9':
				d = int64(c - '0')
			case c >= 'a' && c <= 'f':
				d = int64(c-'a') + 10
			default:
				d = -1
			}
		}
		k |= d << (4 * (14 - i))
	}
	return k
}

// tsMemo is TS of the last time asked, formatted again only when the time
// changes: formatting a time for every delivery of a group commit was 1.5 %
// of the writer's instructions (callgrind, IngestDistinctGroups).
type tsMemo struct {
	t  time.Time
	s  string
	ok bool
}

func (m *tsMemo) ts(t time.Time) string {
	if !m.ok || !t.Equal(m.t) {
		m.t, m.s, m.ok = t, TS(t), true
	}
	return m.s
}

func orJSON(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// FindWebhookEvent returns one event of a task inside a project.
func (db *DB) FindWebhookEvent(ctx context.Context, orgID, projectID, taskID, id string) (*WebhookEvent, error) {
	return scanWebhookEvent(db.r.QueryRowContext(ctx, `SELECT `+webhookEventCols+` FROM webhook_events
		WHERE id = ? AND task_id = ? AND org_id = ? AND project_id = ?`, id, taskID, orgID, projectID))
}

// FindWebhookEventsByID returns the events among ids that belong to the
// task in the project, in the order asked; foreign and unknown ids are
// simply absent.
func (db *DB) FindWebhookEventsByID(ctx context.Context, orgID, projectID, taskID string, ids []string) ([]WebhookEvent, error) {
	var out []WebhookEvent
	for _, id := range ids {
		e, err := db.FindWebhookEvent(ctx, orgID, projectID, taskID, id)
		if IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, *e)
	}
	return out, nil
}

// WebhookEventFilter selects events of one task.
type WebhookEventFilter struct {
	OrgID, ProjectID, TaskID string
	Status                   string
	Type                     string
	Limit, Offset            int
}

// FindWebhookEvents lists events newest first, without bodies, and the total.
func (db *DB) FindWebhookEvents(ctx context.Context, f WebhookEventFilter) ([]WebhookEvent, int, error) {
	q := scopedList(f.OrgID, f.ProjectID).and("task_id = ?", f.TaskID)
	table := "webhook_events"
	if f.Status == EventReceived {
		// The events waiting for dispatch (few, however many the task
		// stored) are in the partial index webhook_events_pending, which
		// serves the literal only; SQLite without statistics took the
		// task's index and read every event of the task to count them (18 s
		// for 16 polls after five minutes of ingest at 7k/s). PostgreSQL's
		// spelling drops INDEXED BY and plans with statistics.
		q.and("status = '" + EventReceived + "'")
		table += " INDEXED BY webhook_events_pending"
	} else {
		q.eq("status", f.Status)
	}
	q.eq("event_type", f.Type)
	return listPage(ctx, db, table, webhookEventMetaCols, q, "received_at DESC, id DESC", nil,
		f.Limit, f.Offset, scanWebhookEventMeta)
}

// PendingWebhookEvents returns acknowledged events not yet dispatched,
// oldest first (the dispatcher's queue, which survives a restart).
func (db *DB) PendingWebhookEvents(ctx context.Context, limit int) ([]WebhookEvent, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+webhookEventCols+` FROM webhook_events WHERE status = ?
		ORDER BY received_at, id LIMIT ?`, EventReceived, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []WebhookEvent
	for rows.Next() {
		e, err := scanWebhookEvent(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *e)
	}
	return out, rows.Err()
}

// PurgeWebhookEvents deletes a task's events received before before (all
// when before is zero), except ones still waiting for dispatch.
func (db *DB) PurgeWebhookEvents(ctx context.Context, orgID, projectID, taskID string, before time.Time) (int, error) {
	var n int64
	err := db.Write(ctx, func(tx *Tx) error {
		q := `DELETE FROM webhook_events WHERE org_id = ? AND project_id = ? AND task_id = ? AND status != 'received'`
		args := []any{orgID, projectID, taskID}
		if !before.IsZero() {
			q += ` AND received_at < ?`
			args = append(args, TS(before))
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return int(n), err
}

// LastWebhookEvent returns the newest event of a task (badge), or NotFound.
func (db *DB) LastWebhookEvent(ctx context.Context, taskID string) (*WebhookEvent, error) {
	return scanWebhookEventMeta(db.r.QueryRowContext(ctx, `SELECT `+webhookEventMetaCols+` FROM webhook_events WHERE task_id = ? AND test = 0
		ORDER BY received_at DESC, id DESC LIMIT 1`, taskID))
}
