package server

import (
	"context"
	"encoding/json"
	"time"

	"github.com/opsagent/opsagent/store"
)

// ApprovalHandler carries out an approved approval of one kind inside the
// decision's transaction (so a decision and its effect commit together)
// and returns what it did, as JSON. The store carries out webhook_event
// approvals itself; the tool-call kind plugs its own in:
// s.approvalHandlers[store.ApprovalToolCall] = ...
type ApprovalHandler = store.ApproveFunc

// ApprovalOut is an approval.
type ApprovalOut struct {
	ID        string          `json:"id"`
	ProjectID string          `json:"project_id"`
	Kind      string          `json:"kind" doc:"webhook_event or tool_call"`
	SessionID *string         `json:"session_id"`
	Title     string          `json:"title"`
	Reason    string          `json:"reason" doc:"why a person must decide (the rule that asked)"`
	RuleID    *string         `json:"rule_id"`
	EventID   *string         `json:"event_id"`
	Subject   json.RawMessage `json:"subject" doc:"what will run when approved"`
	Status    string          `json:"status" doc:"pending, approved, denied, expired"`
	ExpiresAt time.Time       `json:"expires_at"`
	DecidedBy *string         `json:"decided_by"`
	DecidedAt *time.Time      `json:"decided_at"`
	Comment   string          `json:"comment"`
	Result    json.RawMessage `json:"result" doc:"what approving did (e.g. the session it started)"`
	CreatedAt time.Time       `json:"created_at"`
}

// ApprovalPage is a page of approvals.
type ApprovalPage struct {
	Items  []ApprovalOut `json:"items"`
	Total  int           `json:"total"`
	Limit  int           `json:"limit"`
	Offset int           `json:"offset"`
}

// ApprovalQuery filters GET /api/approvals.
type ApprovalQuery struct {
	Status    string `query:"status" validate:"oneof=pending approved denied expired"`
	Kind      string `query:"kind" validate:"oneof=webhook_event tool_call"`
	SessionID string `query:"session_id" validate:"max=64"`
	Limit     int    `query:"limit" default:"25" validate:"gte=1,lte=200"`
	Offset    int    `query:"offset" default:"0" validate:"gte=0"`
}

// ApprovalDecision is the body of approve and deny.
type ApprovalDecision struct {
	Comment string `json:"comment" validate:"max=2000"`
}

func approvalOut(a *store.Approval) ApprovalOut {
	o := ApprovalOut{ID: a.ID, ProjectID: a.ProjectID, Kind: a.Kind, Title: a.Title, Reason: a.Reason,
		Subject: json.RawMessage(orEmpty(a.Subject, "{}")), Status: a.Status, ExpiresAt: a.ExpiresAt, DecidedAt: a.DecidedAt,
		Comment: a.Comment, Result: json.RawMessage(orEmpty(a.Result, "{}")), CreatedAt: a.CreatedAt}
	o.SessionID, o.RuleID, o.EventID, o.DecidedBy = optStr(a.SessionID), optStr(a.RuleID), optStr(a.EventID), optStr(a.DecidedBy)
	return o
}

func orEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// approvalRoutes: list, read and decide approvals.
func (s *Server) approvalRoutes() []*Route {
	tags := []string{"approvals"}
	return []*Route{
		{Method: "GET", Path: "/api/approvals", Summary: "List approvals, pending first", Tags: tags, Auth: AuthAny, Perm: PermSessionsRead, Project: true, Query: ApprovalQuery{}, Resp: ApprovalPage{}, Status: 200, MCP: true, Handle: s.handleListApprovals},
		{Method: "GET", Path: "/api/approvals/{approval_id}", Summary: "Read an approval", Tags: tags, Auth: AuthAny, Perm: PermSessionsRead, Project: true, Resp: ApprovalOut{}, Status: 200, MCP: true, Handle: s.handleGetApproval},
		{Method: "POST", Path: "/api/approvals/{approval_id}/approve", Summary: "Approve (single use; 409 when expired or decided): a webhook event is dispatched", Tags: tags, Auth: AuthAny, Perm: PermApprovals, Project: true, Body: ApprovalDecision{}, Resp: ApprovalOut{}, Status: 200, MaxBody: 16 << 10, MCP: true, Handle: s.handleApprove},
		{Method: "POST", Path: "/api/approvals/{approval_id}/deny", Summary: "Deny, with a comment (single use; 409 when expired or decided)", Tags: tags, Auth: AuthAny, Perm: PermApprovals, Project: true, Body: ApprovalDecision{}, Resp: ApprovalOut{}, Status: 200, MaxBody: 16 << 10, MCP: true, Handle: s.handleDeny},
	}
}

// handleListApprovals is GET /api/approvals.
func (s *Server) handleListApprovals(c *Ctx) error {
	var q ApprovalQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	as, total, err := s.db.FindApprovals(c.Context(), store.ApprovalFilter{OrgID: c.OrgID(), ProjectID: c.ProjectID(),
		Status: q.Status, Kind: q.Kind, SessionID: q.SessionID, Limit: q.Limit, Offset: q.Offset})
	if err != nil {
		return err
	}
	page := ApprovalPage{Items: make([]ApprovalOut, 0, len(as)), Total: total, Limit: q.Limit, Offset: q.Offset}
	for i := range as {
		page.Items = append(page.Items, approvalOut(&as[i]))
	}
	return c.JSON(200, page)
}

// handleGetApproval is GET /api/approvals/{approval_id}.
func (s *Server) handleGetApproval(c *Ctx) error {
	id, err := c.IDParam("approval_id")
	if err != nil {
		return err
	}
	a, err := s.db.FindApproval(c.Context(), c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	return c.JSON(200, approvalOut(a))
}

// handleApprove is POST /api/approvals/{approval_id}/approve.
func (s *Server) handleApprove(c *Ctx) error { return s.decide(c, store.ApprovalApproved) }

// handleDeny is POST /api/approvals/{approval_id}/deny.
func (s *Server) handleDeny(c *Ctx) error { return s.decide(c, store.ApprovalDenied) }

func (s *Server) decide(c *Ctx, decision string) error {
	id, err := c.IDParam("approval_id")
	if err != nil {
		return err
	}
	var req ApprovalDecision
	if err := c.Bind(&req); err != nil {
		return err
	}
	a, err := s.decideApproval(c, id, decision, req.Comment, nil)
	if err != nil {
		return err
	}
	return c.JSON(200, approvalOut(a))
}

// decideApproval decides an approval as the caller of c (console, API, MCP,
// or a linked chat account through channels_decide.go); detail is added to
// the audit event (the chat channel a decision came from).
func (s *Server) decideApproval(c *Ctx, id, decision, comment string, detail map[string]any) (*store.Approval, error) {
	a, err := s.db.DecideApproval(c.Context(), c.OrgID(), c.ProjectID(), id, decision, c.ID.UserID, comment,
		func(ctx context.Context, a *store.Approval) (string, error) {
			h := s.approvalHandlers[a.Kind]
			if h == nil {
				return "", &store.Error{Code: store.EConflict, Message: "approvals of kind " + a.Kind + " cannot be carried out by this server", Reason: "approval_kind_unsupported"}
			}
			return h(ctx, a)
		})
	if err != nil {
		return nil, err
	}
	if decision == store.ApprovalApproved {
		s.tasks.Wake()
	}
	d := map[string]any{"kind": a.Kind}
	for k, v := range detail {
		d[k] = v
	}
	c.Audit("approval."+decision, "success", "approval", id, d)
	s.toolCallDecided(c.Context(), a)
	return a, nil
}
