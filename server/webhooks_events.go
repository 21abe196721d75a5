package server

import (
	"encoding/json"
	"time"

	"github.com/opsagent/opsagent/server/webhook/pipeline"
	"github.com/opsagent/opsagent/store"
)

// maxReplay is the bulk replay limit (spec 8).
const maxReplay = 50

// WebhookEventListOut is one row of the event list (no body).
type WebhookEventListOut struct {
	ID             string               `json:"id"`
	TaskID         string               `json:"task_id"`
	ReceivedAt     time.Time            `json:"received_at"`
	Provider       string               `json:"provider"`
	Type           string               `json:"type"`
	Status         string               `json:"status" doc:"received (acknowledged, dispatch pending), dispatched, no_match, approval_pending, correlated, skipped (every run it would start was skipped: overlap_policy skip with a run in progress, or a disabled task; its dispatch items say why, and no session is recorded), suppressed (held back by a maintenance window), failed"`
	Verification   string               `json:"verification" doc:"the scheme that verified the delivery (test deliveries too); replays carry the original's"`
	IdempotencyKey string               `json:"idempotency_key"`
	BodySize       int                  `json:"body_size"`
	BodyKept       bool                 `json:"body_kept" doc:"whether the body is stored (false in metadata-only mode once dispatched); the list and the detail agree"`
	Raw            bool                 `json:"raw" doc:"generic provider: the body was not JSON and is kept as text"`
	Test           bool                 `json:"test"`
	ReplayOf       *string              `json:"replay_of"`
	Dispatch       []store.DispatchItem `json:"dispatch" doc:"what the event started: runs (agent sessions), approvals, the incident it joined"`
	Error          string               `json:"error"`
	DispatchedAt   *time.Time           `json:"dispatched_at"`
}

// WebhookEventOut is one event with its redacted body, headers and alerts.
type WebhookEventOut struct {
	WebhookEventListOut
	Headers map[string]string `json:"headers" doc:"credential headers are never stored"`
	Body    *string           `json:"body" doc:"the redacted payload as stored; null when not kept"`
	Alerts  json.RawMessage   `json:"alerts" doc:"normalized alerts: source, title, severity, status, fingerprint, group_key, labels, links"`
}

// WebhookEventPage is a page of events.
type WebhookEventPage struct {
	Items  []WebhookEventListOut `json:"items"`
	Total  int                   `json:"total"`
	Limit  int                   `json:"limit"`
	Offset int                   `json:"offset"`
}

// WebhookEventQuery filters the event list.
type WebhookEventQuery struct {
	Status string `query:"status" validate:"oneof=received dispatched no_match approval_pending correlated skipped suppressed failed"`
	Type   string `query:"type" validate:"max=128"`
	Limit  int    `query:"limit" default:"25" validate:"gte=1,lte=200"`
	Offset int    `query:"offset" default:"0" validate:"gte=0"`
}

// WebhookPurgeQuery bounds a purge.
type WebhookPurgeQuery struct {
	Before *time.Time `query:"before" doc:"only events received before this time; all when absent (events still waiting for dispatch are kept)"`
}

// WebhookPurgeOut says how many events were deleted.
type WebhookPurgeOut struct {
	Deleted int `json:"deleted"`
}

// WebhookReplayRequest lists events to replay.
type WebhookReplayRequest struct {
	EventIDs []string `json:"event_ids" validate:"required,min=1,max=50" doc:"1 to 50 event ids of this webhook"`
}

// WebhookReplayItem is the outcome of replaying one event.
type WebhookReplayItem struct {
	EventID    string `json:"event_id"`
	NewEventID string `json:"new_event_id,omitempty"`
	Status     string `json:"status" doc:"accepted, not_found, or body_not_kept (metadata-only)"`
}

// WebhookReplayOut answers a replay.
type WebhookReplayOut struct {
	Items []WebhookReplayItem `json:"items"`
}

func webhookEventListOut(e *store.WebhookEvent) WebhookEventListOut {
	o := WebhookEventListOut{ID: e.ID, TaskID: e.TaskID, ReceivedAt: e.ReceivedAt, Provider: e.Provider, Type: e.Type,
		Status: e.Status, Verification: e.Verification, IdempotencyKey: e.IdemKey, BodySize: e.BodySize,
		BodyKept: e.BodyKept, Raw: e.Raw, Test: e.Test, Error: e.Error, DispatchedAt: e.DispatchedAt, Dispatch: []store.DispatchItem{}}
	if e.ReplayOf != "" {
		o.ReplayOf = &e.ReplayOf
	}
	_ = json.Unmarshal([]byte(e.Dispatch), &o.Dispatch)
	return o
}

// handleListWebhookEvents is GET /api/tasks/{task_id}/webhook/events.
func (s *Server) handleListWebhookEvents(c *Ctx) error {
	id, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	var q WebhookEventQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	if _, err := s.db.FindWebhook(c.Context(), c.OrgID(), c.ProjectID(), id); err != nil {
		return err
	}
	evs, total, err := s.db.FindWebhookEvents(c.Context(), store.WebhookEventFilter{OrgID: c.OrgID(), ProjectID: c.ProjectID(),
		TaskID: id, Status: q.Status, Type: q.Type, Limit: q.Limit, Offset: q.Offset})
	if err != nil {
		return err
	}
	page := WebhookEventPage{Items: make([]WebhookEventListOut, 0, len(evs)), Total: total, Limit: q.Limit, Offset: q.Offset}
	for i := range evs {
		page.Items = append(page.Items, webhookEventListOut(&evs[i]))
	}
	return c.JSON(200, page)
}

// handleGetWebhookEvent is GET /api/tasks/{task_id}/webhook/events/{event_id}.
func (s *Server) handleGetWebhookEvent(c *Ctx) error {
	id, eid, err := c.IDParams("task_id", "event_id")
	if err != nil {
		return err
	}
	e, err := s.db.FindWebhookEvent(c.Context(), c.OrgID(), c.ProjectID(), id, eid)
	if err != nil {
		return err
	}
	o := WebhookEventOut{WebhookEventListOut: webhookEventListOut(e), Headers: map[string]string{}, Alerts: json.RawMessage(e.Alerts)}
	_ = json.Unmarshal([]byte(e.Headers), &o.Headers)
	if e.Body != nil {
		b := string(e.Body)
		o.Body = &b
	}
	return c.JSON(200, o)
}

// handlePurgeWebhookEvents is DELETE /api/tasks/{task_id}/webhook/events.
func (s *Server) handlePurgeWebhookEvents(c *Ctx) error {
	id, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	var q WebhookPurgeQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	if _, err := s.db.FindWebhook(c.Context(), c.OrgID(), c.ProjectID(), id); err != nil {
		return err
	}
	var before time.Time
	if q.Before != nil {
		before = *q.Before
	}
	n, err := s.db.PurgeWebhookEvents(c.Context(), c.OrgID(), c.ProjectID(), id, before)
	if err != nil {
		return err
	}
	c.Audit("webhook.events_purged", "success", "task", id, map[string]any{"deleted": n})
	return c.JSON(200, WebhookPurgeOut{Deleted: n})
}

// handleReplayWebhookEvent is POST /api/tasks/{task_id}/webhook/events/{event_id}/replay.
func (s *Server) handleReplayWebhookEvent(c *Ctx) error {
	id, eid, err := c.IDParams("task_id", "event_id")
	if err != nil {
		return err
	}
	if _, err := s.db.FindWebhookEvent(c.Context(), c.OrgID(), c.ProjectID(), id, eid); err != nil {
		return err
	}
	return s.replay(c, id, []string{eid})
}

// handleReplayWebhookEvents is POST /api/tasks/{task_id}/webhook/events/replay.
func (s *Server) handleReplayWebhookEvents(c *Ctx) error {
	id, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	var req WebhookReplayRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	if len(req.EventIDs) > maxReplay {
		return invalid("at most 50 events per replay", "too_long", "body", "event_ids")
	}
	return s.replay(c, id, req.EventIDs)
}

// replay stores each event again as a new event (replay_of set, no dedupe,
// no new verification: the original was verified) and dispatches it: the
// same routing as the live delivery, since both route the redacted bytes.
func (s *Server) replay(c *Ctx, taskID string, ids []string) error {
	h, err := s.db.FindWebhook(c.Context(), c.OrgID(), c.ProjectID(), taskID)
	if err != nil {
		return err
	}
	st, err := s.wh.Lookup(c.Context(), taskID)
	if store.IsNotFound(err) {
		return &store.Error{Code: store.EConflict, Message: "the webhook or its task is disabled", Reason: "webhook_disabled"}
	}
	if err != nil {
		return err
	}
	_ = h
	out := WebhookReplayOut{Items: []WebhookReplayItem{}}
	for _, eid := range ids {
		it := WebhookReplayItem{EventID: eid, Status: "not_found"}
		var e *store.WebhookEvent
		if store.ValidID(eid) {
			e, err = s.db.FindWebhookEvent(c.Context(), c.OrgID(), c.ProjectID(), taskID, eid)
			if err != nil && !store.IsNotFound(err) {
				return err
			}
		}
		switch {
		case e == nil:
		case e.Body == nil:
			it.Status = "body_not_kept"
		default:
			ack, err := s.ingest(c.Context(), st, pipeline.StoredHeaders(e.Headers), e.Body,
				pipeline.Opts{ReplayOf: e.ID, SkipVerify: true, Verification: e.Verification})
			if err != nil {
				return err
			}
			it.NewEventID, it.Status = ack.EventID, ack.Status
		}
		out.Items = append(out.Items, it)
	}
	c.Audit("webhook.events_replayed", "success", "task", taskID, map[string]any{"count": len(ids)})
	return c.JSON(202, out)
}
