package server

import (
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/store"
)

// Agent sessions (spec 4.6). Every route is project-scoped (X-Project-ID);
// another project's or tenant's session reads exactly like a missing one.
// A session's status is one of the spec's six; a session whose turn stopped
// at a tool call awaiting a person's decision is `running` with
// waiting_approval true.

// SessionIndexOut is one session with everything the console shows.
type SessionIndexOut struct {
	ID              string     `json:"id"`
	SessionID       string     `json:"session_id" doc:"same as id"`
	PromptVersion   string     `json:"prompt_version,omitempty" doc:"the system prompt's version the session ran with (server/agent/prompts); on the detail route"`
	ProjectID       string     `json:"project_id"`
	Name            string     `json:"name" doc:"optional handle to resume by; \"\" when unnamed"`
	Title           string     `json:"title" doc:"generated from the first prompt"`
	Summary         string     `json:"summary" doc:"the last answer of the agent, clipped"`
	FirstPrompt     string     `json:"first_prompt"`
	TaskID          *string    `json:"task_id"`
	TaskName        string     `json:"task_name"`
	AgentType       string     `json:"agent_type"`
	Source          string     `json:"source" doc:"webchat, telegram, slack, whatsapp or task"`
	TriggerSource   string     `json:"trigger_source" doc:"manual, scheduled, webhook or web"`
	Status          string     `json:"status" doc:"pending, running, completed, failed, cancelled or timeout"`
	WaitingApproval bool       `json:"waiting_approval" doc:"running, stopped at a tool call a person must approve"`
	Reason          string     `json:"reason" doc:"why it failed, timed out or was cancelled"`
	Model           string     `json:"model"`
	CreatedBy       *string    `json:"created_by"`
	TokensIn        int64      `json:"tokens_in"`
	TokensOut       int64      `json:"tokens_out"`
	TotalTokens     int64      `json:"total_tokens"`
	Cost            float64    `json:"cost" doc:"USD, from the provider's token counts and the configured prices"`
	TokensEstimated bool       `json:"tokens_estimated,omitempty" doc:"some counts are this server's estimate: the model server sent no usage (detail only)"`
	DurationMS      int64      `json:"duration_ms" doc:"time spent running, all turns"`
	Turns           int        `json:"turns"`
	Steps           int        `json:"steps" doc:"model calls, all turns"`
	ToolCalls       int        `json:"tool_calls"`
	StartedAt       *time.Time `json:"started_at"`
	EndedAt         *time.Time `json:"ended_at"`
	LastActivity    time.Time  `json:"last_activity"`
	CreatedAt       time.Time  `json:"created_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
}

// SessionIndexResponse is a page of the session index.
type SessionIndexResponse struct {
	Items  []SessionIndexOut `json:"items"`
	Total  int               `json:"total"`
	Limit  int               `json:"limit"`
	Offset int               `json:"offset"`
}

// SessionLegacyOut is one row of GET /api/sessions, the shape the CLI reads.
type SessionLegacyOut struct {
	ID           string    `json:"id"`
	SessionID    string    `json:"session_id"`
	Title        string    `json:"title"`
	FirstPrompt  string    `json:"first_prompt"`
	Source       string    `json:"source"`
	Status       string    `json:"status"`
	TaskName     string    `json:"task_name"`
	Tokens       int64     `json:"tokens"`
	Cost         float64   `json:"cost"`
	CreatedAt    time.Time `json:"created_at"`
	LastActivity time.Time `json:"last_activity"`
}

// SessionListQuery are the parameters of GET /api/sessions.
type SessionListQuery struct {
	Limit  int    `query:"limit" default:"50" validate:"gte=1,lte=200"`
	Offset int    `query:"offset" default:"0" validate:"gte=0"`
	Q      string `query:"q" validate:"max=200" doc:"case-insensitive substring of title or first prompt"`
	Source string `query:"source" validate:"oneof=webchat telegram slack whatsapp task"`
}

// SessionIndexQuery are the parameters of GET /api/sessions/index.
type SessionIndexQuery struct {
	Limit         int        `query:"limit" default:"25" validate:"gte=1,lte=200"`
	Offset        int        `query:"offset" default:"0" validate:"gte=0"`
	Q             string     `query:"q" validate:"max=200" doc:"case-insensitive substring of title, summary, name, session id, task id or task name"`
	Source        string     `query:"source" validate:"oneof=web webchat telegram slack whatsapp task" doc:"web (or webchat) selects web chat sessions"`
	TriggerSource string     `query:"trigger_source" validate:"oneof=manual scheduled webhook web"`
	Status        string     `query:"status" validate:"oneof=pending running completed failed cancelled timeout"`
	CreatedAfter  *time.Time `query:"created_after" doc:"RFC 3339 or YYYY-MM-DD; inclusive"`
	CreatedBefore *time.Time `query:"created_before" doc:"RFC 3339 or YYYY-MM-DD; exclusive"`
	MinCost       *float64   `query:"min_cost" validate:"gte=0" doc:"USD, inclusive"`
	MaxCost       *float64   `query:"max_cost" validate:"gte=0" doc:"USD, inclusive"`
	Sort          string     `query:"sort" default:"last_activity" validate:"oneof=last_activity created_at cost tokens duration status"`
	SortDir       string     `query:"sort_dir" default:"desc" validate:"oneof=asc desc"`
}

// SessionResumeRequest is the body of POST /api/sessions/{session_ref}/resume.
type SessionResumeRequest struct {
	Prompt string `json:"prompt" validate:"required,min=1,max=32000" doc:"the next user turn"`
}

// SessionResumeOut answers a resume (202): the turn runs in the background;
// follow it at events_url (SSE) from first_event_id.
type SessionResumeOut struct {
	SessionID    string `json:"session_id"`
	Status       string `json:"status"`
	Turn         int    `json:"turn"`
	FirstEventID int64  `json:"first_event_id" doc:"id of the turn's first event; send Last-Event-ID first_event_id-1 to read the turn from its start"`
	EventsURL    string `json:"events_url"`
	Replayed     bool   `json:"replayed" doc:"true when the Idempotency-Key was seen before: this is the turn it started"`
}

// TranscriptOut is a session's whole conversation, tool output in full.
type TranscriptOut struct {
	SessionID string         `json:"session_id"`
	Messages  []llm.Message  `json:"messages"`
	Pending   *agent.Pending `json:"pending" doc:"the tool call awaiting approval, when waiting_approval"`
	UpdatedAt *time.Time     `json:"updated_at"`
}

// sessionRoutes: lists, detail, transcript, events, resume and cancel.
func (s *Server) sessionRoutes() []*Route {
	tags := []string{"sessions"}
	return []*Route{
		{Method: "GET", Path: "/api/sessions", Summary: "List sessions (legacy array shape kept for the CLI)", Tags: tags, Auth: AuthAny, Perm: PermSessionsRead, Project: true, Query: SessionListQuery{}, Resp: []SessionLegacyOut{}, Status: 200, MCP: true, Handle: s.handleListSessionsLegacy},
		{Method: "GET", Path: "/api/sessions/index", Summary: "Session index: filters, sorts, pagination", Tags: tags, Auth: AuthAny, Perm: PermSessionsRead, Project: true, Query: SessionIndexQuery{}, Resp: SessionIndexResponse{}, Status: 200, MCP: true, Handle: s.handleSessionIndex},
		{Method: "GET", Path: "/api/sessions/detail/{session_id}", Summary: "One session", Tags: tags, Auth: AuthAny, Perm: PermSessionsRead, Project: true, Resp: SessionIndexOut{}, Status: 200, MCP: true, Handle: s.handleSessionDetail},
		{Method: "GET", Path: "/api/sessions/{session_id}/transcript", Summary: "A session's full transcript (messages, tool calls, tool results)", Tags: tags, Auth: AuthAny, Perm: PermSessionsRead, Project: true, Resp: TranscriptOut{}, Status: 200, MCP: true, Handle: s.handleSessionTranscript},
		{Method: "GET", Path: "/api/sessions/{session_id}/events", Summary: "Watch a session over SSE; Last-Event-ID (or ?after=) replays what was missed", Tags: tags, Auth: AuthAny, Perm: PermSessionsRead, Project: true, Query: SessionEventsQuery{}, Status: 200, Handle: s.handleSessionEvents},
		{Method: "POST", Path: "/api/sessions/{session_ref}/resume", Summary: "Continue a session (by id or name) with a new prompt; Idempotency-Key makes it safe to retry", Tags: tags, Auth: AuthAny, Perm: PermSessionsWrite, Project: true, Body: SessionResumeRequest{}, Resp: SessionResumeOut{}, Status: 202, MaxBody: 64 << 10, MCP: true, Handle: s.handleResumeSession},
		{Method: "POST", Path: "/api/sessions/{session_id}/cancel", Summary: "Cancel a running, waiting or pending session", Tags: tags, Auth: AuthAny, Perm: PermSessionsWrite, Project: true, Resp: SessionIndexOut{}, Status: 200, MCP: true, Handle: s.handleCancelSession},
	}
}

func sessionIndexOut(a *store.AgentSession) SessionIndexOut {
	o := SessionIndexOut{ID: a.ID, SessionID: a.ID, ProjectID: a.ProjectID, Name: a.Name, Title: a.Title, Summary: a.Summary,
		FirstPrompt: a.FirstPrompt, TaskName: a.TaskName, AgentType: a.AgentType, Source: a.Source, TriggerSource: a.TriggerSource,
		Status: a.Status, WaitingApproval: a.WaitingApproval, Reason: a.Reason, Model: a.Model, TokensIn: a.TokensIn,
		TokensOut: a.TokensOut, TotalTokens: a.TokensIn + a.TokensOut, Cost: a.Cost, DurationMS: a.DurationMS,
		Turns: a.Turns, Steps: a.Steps, ToolCalls: a.ToolCalls, StartedAt: a.StartedAt, EndedAt: a.EndedAt,
		LastActivity: a.LastActivity, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
	if a.TaskID != "" {
		o.TaskID = &a.TaskID
	}
	if a.CreatedBy != "" {
		o.CreatedBy = &a.CreatedBy
	}
	return o
}

// handleListSessionsLegacy is GET /api/sessions.
func (s *Server) handleListSessionsLegacy(c *Ctx) error {
	var q SessionListQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	rows, _, err := s.db.FindSessions(c.Context(), store.SessionFilter{OrgID: c.OrgID(), ProjectID: c.ProjectID(),
		Q: q.Q, QLegacy: true, Source: q.Source, Sort: "last_activity", Limit: q.Limit, Offset: q.Offset})
	if err != nil {
		return err
	}
	out := make([]SessionLegacyOut, len(rows))
	for i, a := range rows {
		out[i] = SessionLegacyOut{ID: a.ID, SessionID: a.ID, Title: a.Title, FirstPrompt: a.FirstPrompt, Source: a.Source,
			Status: a.Status, TaskName: a.TaskName, Tokens: a.TokensIn + a.TokensOut, Cost: a.Cost, CreatedAt: a.CreatedAt,
			LastActivity: a.LastActivity}
	}
	return c.JSON(200, out)
}

// handleSessionIndex is GET /api/sessions/index.
func (s *Server) handleSessionIndex(c *Ctx) error {
	var q SessionIndexQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	if q.MinCost != nil && q.MaxCost != nil && *q.MinCost > *q.MaxCost {
		return invalid("min_cost must not exceed max_cost", "value_error", "query", "min_cost")
	}
	source := q.Source
	if source == "web" {
		source = store.SourceWebchat
	}
	rows, total, err := s.db.FindSessions(c.Context(), store.SessionFilter{OrgID: c.OrgID(), ProjectID: c.ProjectID(),
		Q: q.Q, Source: source, TriggerSource: q.TriggerSource, Status: q.Status, CreatedAfter: q.CreatedAfter,
		CreatedBefore: q.CreatedBefore, MinCost: q.MinCost, MaxCost: q.MaxCost, Sort: q.Sort, Asc: q.SortDir == "asc",
		Limit: q.Limit, Offset: q.Offset})
	if err != nil {
		return err
	}
	out := SessionIndexResponse{Items: make([]SessionIndexOut, len(rows)), Total: total, Limit: q.Limit, Offset: q.Offset}
	for i := range rows {
		out.Items[i] = sessionIndexOut(&rows[i])
	}
	return c.JSON(200, out)
}

// handleSessionDetail is GET /api/sessions/detail/{session_id}.
func (s *Server) handleSessionDetail(c *Ctx) error {
	a, err := s.sessionParam(c)
	if err != nil {
		return err
	}
	out := sessionIndexOut(a)
	if out.TokensEstimated, err = s.db.TokensEstimated(c.Context(), c.OrgID(), a.ID); err != nil {
		return err
	}
	out.PromptVersion, _ = s.db.SessionPrompt(c.Context(), a.ID)
	return c.JSON(200, out)
}

// sessionParam reads {session_id} as a session of the caller's project.
func (s *Server) sessionParam(c *Ctx) (*store.AgentSession, error) {
	id, err := c.IDParam("session_id")
	if err != nil {
		return nil, err
	}
	return s.db.FindProjectSession(c.Context(), c.OrgID(), c.ProjectID(), id)
}

// handleSessionTranscript is GET /api/sessions/{session_id}/transcript. A
// session that never ran has an empty transcript.
func (s *Server) handleSessionTranscript(c *Ctx) error {
	a, err := s.sessionParam(c)
	if err != nil {
		return err
	}
	out := TranscriptOut{SessionID: a.ID, Messages: []llm.Message{}}
	t, err := s.db.FindTranscript(c.Context(), c.OrgID(), a.ID)
	switch {
	case store.IsNotFound(err):
	case err != nil:
		return err
	default:
		msgs, pending, err := runner.DecodeTranscript(t)
		if err != nil {
			return err
		}
		out.Messages, out.Pending, out.UpdatedAt = msgs, pending, &t.UpdatedAt
	}
	return c.JSON(200, out)
}

// handleResumeSession is POST /api/sessions/{session_ref}/resume: by id or
// name; 404 when the session cannot be resumed, 409 when it is running (or
// waiting for an approval) or the name is ambiguous.
func (s *Server) handleResumeSession(c *Ctx) error {
	ref := strings.TrimSpace(c.Param("session_ref"))
	if ref == "" || len(ref) > 200 {
		return store.NotFound("session")
	}
	if err := s.allowAgentTurn(c); err != nil {
		return err
	}
	key, err := idempotencyKey(c)
	if err != nil {
		return err
	}
	var req SessionResumeRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	a, err := s.db.FindSessionRef(c.Context(), c.OrgID(), c.ProjectID(), ref)
	if err != nil {
		return err
	}
	info := runner.RunInfo{OrgID: c.OrgID(), ProjectID: c.ProjectID(), SessionID: a.ID, UserID: c.ID.UserID}
	t, err := s.runner.Continue(c.Context(), info, req.Prompt, key)
	if err != nil {
		return err
	}
	if !t.Replayed {
		c.Audit("session.resumed", "success", "session", a.ID, map[string]any{"turn": t.Turn})
	}
	return c.JSON(202, SessionResumeOut{SessionID: a.ID, Status: t.Session.Status, Turn: t.Turn, FirstEventID: t.FirstSeq,
		EventsURL: "/api/sessions/" + a.ID + "/events", Replayed: t.Replayed})
}

// handleCancelSession is POST /api/sessions/{session_id}/cancel: a live
// turn is stopped (status cancelled), a session waiting for approval or a
// pending task run is cancelled in place; anything finished is 409.
func (s *Server) handleCancelSession(c *Ctx) error {
	a, err := s.sessionParam(c)
	if err != nil {
		return err
	}
	by := "an operator"
	if c.ID.UserID != "" {
		if u, err := s.db.FindUserByID(c.Context(), c.ID.UserID); err == nil {
			by = u.Email
		}
	}
	if !s.runner.Cancel(c.Context(), a.ID, by) {
		ok, err := s.db.CancelIdleSession(c.Context(), c.OrgID(), c.ProjectID(), a.ID, "cancelled by "+by)
		if err != nil {
			return err
		}
		if !ok {
			return &store.Error{Code: store.EConflict, Message: "session is not running", Reason: "session_not_running"}
		}
	}
	if err := s.db.WithdrawSessionApprovals(c.Context(), c.OrgID(), a.ID); err != nil {
		return err
	}
	c.Audit("session.cancelled", "success", "session", a.ID, nil)
	a, err = s.db.FindProjectSession(c.Context(), c.OrgID(), c.ProjectID(), a.ID)
	if err != nil {
		return err
	}
	return c.JSON(200, sessionIndexOut(a))
}

// idempotencyKey reads the optional Idempotency-Key header.
func idempotencyKey(c *Ctx) (string, error) {
	key := strings.TrimSpace(c.R.Header.Get("Idempotency-Key"))
	if len(key) > maxIdempotencyKey || strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", invalid("Idempotency-Key must be at most 200 printable characters", "value_error", "header", "idempotency-key")
	}
	return key, nil
}
