package server

import (
	"encoding/csv"
	"encoding/json"
	"strconv"
	"time"

	"github.com/opsagent/opsagent/store"
)

// AuditEventOut is one audit event. actor_type is user, api_key or system;
// hash = sha256 over the canonical fields and prev_hash, chaining every event
// to the previous one of its org (seq numbers them from 1).
type AuditEventOut struct {
	ID          string         `json:"id"`
	Seq         int64          `json:"seq"`
	OrgID       string         `json:"org_id"`
	ProjectID   *string        `json:"project_id"`
	ActorType   string         `json:"actor_type"`
	ActorUserID *string        `json:"actor_user_id"`
	ActorKeyID  *string        `json:"actor_key_id"`
	Action      string         `json:"action"`
	Outcome     string         `json:"outcome"`
	TargetType  string         `json:"target_type"`
	TargetID    string         `json:"target_id"`
	IP          string         `json:"ip"`
	UserAgent   string         `json:"user_agent"`
	Detail      map[string]any `json:"detail"`
	CreatedAt   time.Time      `json:"created_at"`
	PrevHash    string         `json:"prev_hash"`
	Hash        string         `json:"hash"`
}

// AuditLogPage is a page of the audit log, newest first.
type AuditLogPage struct {
	Items  []AuditEventOut `json:"items"`
	Total  int             `json:"total"`
	Limit  int             `json:"limit"`
	Offset int             `json:"offset"`
}

// AuditQuery filters the audit log. action ending in * matches a prefix
// (member.*); from is inclusive, to exclusive.
type AuditQuery struct {
	Actor      string    `query:"actor" validate:"max=64"`
	Action     string    `query:"action" validate:"max=120"`
	TargetType string    `query:"target_type" validate:"max=64"`
	TargetID   string    `query:"target_id" validate:"max=128"`
	Outcome    string    `query:"outcome" validate:"oneof=success failure denied"`
	From       time.Time `query:"from"`
	To         time.Time `query:"to"`
	Limit      int       `query:"limit" default:"50" validate:"gte=1,lte=200"`
	Offset     int       `query:"offset" default:"0" validate:"gte=0"`
}

// AuditExportQuery is AuditQuery plus the format (CSV or JSON Lines), without paging.
type AuditExportQuery struct {
	Format     string    `query:"format" default:"jsonl" validate:"oneof=csv jsonl"`
	Actor      string    `query:"actor" validate:"max=64"`
	Action     string    `query:"action" validate:"max=120"`
	TargetType string    `query:"target_type" validate:"max=64"`
	TargetID   string    `query:"target_id" validate:"max=128"`
	Outcome    string    `query:"outcome" validate:"oneof=success failure denied"`
	From       time.Time `query:"from"`
	To         time.Time `query:"to"`
}

// AuditVerifyOut reports whether the org's chain holds and where it first breaks.
type AuditVerifyOut struct {
	OK          bool    `json:"ok"`
	Checked     int     `json:"checked"`
	BrokenID    *string `json:"broken_id"`
	BrokenSeq   *int64  `json:"broken_seq"`
	BrokenCause *string `json:"broken_reason" doc:"hash_mismatch, prev_hash_mismatch, sequence_gap, or truncated / checkpoint_mismatch when the chain no longer reaches the newest checkpoint (broken_seq is the checkpoint's seq)"`
	// Checkpoint is the signed head published by this verify (null when
	// the chain is broken).
	Checkpoint *AuditCheckpointOut `json:"checkpoint" doc:"signed checkpoint of the chain head published by this call; keep it to detect a later truncation"`
}

func (s *Server) auditRoutes() []*Route {
	tags := []string{"audit"}
	return []*Route{
		{Method: "GET", Path: "/api/audit-logs", Summary: "List the organization's audit events with filters, newest first", Tags: tags, Auth: AuthAny, Perm: PermAuditRead, Query: AuditQuery{}, Resp: AuditLogPage{}, Status: 200, MCP: true, Handle: s.handleListAudit},
		{Method: "GET", Path: "/api/audit-logs/export", Summary: "Export the organization's audit events as CSV or JSON Lines, oldest first; the X-Audit-Checkpoint header carries a signed checkpoint of the chain head (AuditCheckpointOut as JSON)", Tags: tags, Auth: AuthAny, Perm: PermAuditRead, Query: AuditExportQuery{}, Status: 200, Handle: s.handleExportAudit},
		{Method: "GET", Path: "/api/audit-logs/verify", Summary: "Recompute the organization's hash chain, check it still reaches the newest signed checkpoint, report the first broken link, and publish a new signed checkpoint", Tags: tags, Auth: AuthAny, Perm: PermAuditRead, Resp: AuditVerifyOut{}, Status: 200, Handle: s.handleVerifyAudit},
	}
}

func auditOut(e *store.AuditRecord) AuditEventOut {
	o := AuditEventOut{ID: e.ID, Seq: e.Seq, OrgID: e.OrgID, ProjectID: strPtr(e.ProjectID), ActorUserID: strPtr(e.ActorUserID), ActorKeyID: strPtr(e.ActorKeyID),
		Action: e.Action, Outcome: e.Outcome, TargetType: e.TargetType, TargetID: e.TargetID, IP: e.IP, UserAgent: e.UserAgent,
		CreatedAt: e.CreatedAt, PrevHash: e.PrevHash, Hash: e.Hash, ActorType: "system"}
	switch {
	case e.ActorKeyID != "":
		o.ActorType = "api_key"
	case e.ActorUserID != "":
		o.ActorType = "user"
	}
	_ = json.Unmarshal([]byte(e.Detail), &o.Detail)
	if o.Detail == nil {
		o.Detail = map[string]any{}
	}
	return o
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// handleListAudit is GET /api/audit-logs. It flushes the writer first so a
// reader sees every event written before its request.
func (s *Server) handleListAudit(c *Ctx) error {
	var q AuditQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	if err := s.auditLog.Flush(c.Context()); err != nil {
		return err
	}
	items, total, err := s.db.FindAuditEvents(c.Context(), store.AuditFilter{OrgID: c.OrgID(), Actor: q.Actor, Action: q.Action,
		TargetType: q.TargetType, TargetID: q.TargetID, Outcome: q.Outcome, From: q.From, To: q.To, Limit: q.Limit, Offset: q.Offset})
	if err != nil {
		return err
	}
	out := AuditLogPage{Items: make([]AuditEventOut, len(items)), Total: total, Limit: q.Limit, Offset: q.Offset}
	for i, e := range items {
		out.Items[i] = auditOut(e)
	}
	return c.JSON(200, out)
}

var auditCSVHeader = []string{"id", "seq", "org_id", "project_id", "actor_type", "actor_user_id", "actor_key_id", "action", "outcome",
	"target_type", "target_id", "ip", "user_agent", "detail", "created_at", "prev_hash", "hash"}

// handleExportAudit is GET /api/audit-logs/export: streamed, oldest first, so
// an export can be verified offline by replaying the chain.
func (s *Server) handleExportAudit(c *Ctx) error {
	var q AuditExportQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	if err := s.auditLog.Flush(c.Context()); err != nil {
		return err
	}
	cp, err := s.publishCheckpoint(c.Context(), c.OrgID())
	if err != nil {
		return err
	}
	c.W.Header().Set("X-Audit-Checkpoint", checkpointHeader(cp))
	f := store.AuditFilter{OrgID: c.OrgID(), Actor: q.Actor, Action: q.Action, TargetType: q.TargetType, TargetID: q.TargetID, Outcome: q.Outcome, From: q.From, To: q.To}
	name := "audit-" + s.Now().Format("20060102T150405Z")
	if q.Format == "csv" {
		c.W.Header().Set("Content-Type", "text/csv; charset=utf-8")
		c.W.Header().Set("Content-Disposition", `attachment; filename="`+name+`.csv"`)
		c.W.WriteHeader(200)
		cw := csv.NewWriter(c.W)
		_ = cw.Write(auditCSVHeader)
		err := s.db.EachAuditEvent(c.Context(), f, func(e *store.AuditRecord) error {
			o := auditOut(e)
			return cw.Write([]string{o.ID, strconv.FormatInt(o.Seq, 10), o.OrgID, e.ProjectID, o.ActorType, e.ActorUserID, e.ActorKeyID, o.Action,
				o.Outcome, o.TargetType, o.TargetID, o.IP, o.UserAgent, e.Detail, store.TS(o.CreatedAt), o.PrevHash, o.Hash})
		})
		cw.Flush()
		if err != nil {
			loggerFrom(c.Context()).Error("audit export", "err", err)
		}
		return nil
	}
	c.W.Header().Set("Content-Type", "application/x-ndjson")
	c.W.Header().Set("Content-Disposition", `attachment; filename="`+name+`.jsonl"`)
	c.W.WriteHeader(200)
	enc := json.NewEncoder(c.W)
	enc.SetEscapeHTML(false)
	if err := s.db.EachAuditEvent(c.Context(), f, func(e *store.AuditRecord) error { return enc.Encode(auditOut(e)) }); err != nil {
		loggerFrom(c.Context()).Error("audit export", "err", err)
	}
	return nil
}

// handleVerifyAudit is GET /api/audit-logs/verify.
func (s *Server) handleVerifyAudit(c *Ctx) error {
	if err := s.auditLog.Flush(c.Context()); err != nil {
		return err
	}
	n, brk, err := s.db.VerifyAuditChain(c.Context(), c.OrgID())
	if err != nil {
		return err
	}
	out := AuditVerifyOut{OK: brk == nil, Checked: n}
	if brk != nil {
		out.BrokenID, out.BrokenSeq, out.BrokenCause = &brk.ID, &brk.Seq, &brk.Reason
		return c.JSON(200, out)
	}
	// The links hold; the newest events may still have been deleted, which
	// only an earlier checkpoint can tell.
	reason, cp, err := s.checkTruncation(c.Context(), c.OrgID())
	if err != nil {
		return err
	}
	if reason != "" {
		out.OK, out.BrokenSeq, out.BrokenCause = false, &cp.Seq, &reason
		return c.JSON(200, out)
	}
	if out.Checkpoint, err = s.publishCheckpoint(c.Context(), c.OrgID()); err != nil {
		return err
	}
	return c.JSON(200, out)
}
