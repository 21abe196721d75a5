package server

import (
	"strconv"
	"strings"

	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/store"
)

// Web chat over server-sent events.
//
// POST /api/chat starts a session (or, with session_id, sends its next turn)
// and answers with the turn's event stream. GET /api/sessions/{id}/events
// watches a session: any number of viewers, each replaying from
// Last-Event-ID (or ?after=N). The run belongs to the server, not to the
// request: closing the browser leaves it running, and reconnecting replays
// what was missed. Streams end with the turn's done event, or when the
// server shuts down.
//
// Every event carries `id:` (its number in the session, increasing across
// turns), `event:` (its name) and `data:` (one JSON object):
//
//	session           runner.SessionStarted: the turn started (first event of every turn)
//	message.delta     {step, text}: a piece of the assistant's answer, in order
//	message           {step, content, tool_calls}: the step's complete assistant message
//	usage             {step, usage, total, cost}: tokens of the model call and running totals
//	tool.call         {step, call_id, name, arguments}: the model called a tool
//	tool.output       {step, call_id, name, host, text, dropped?}: live output of a running command on a
//	                  connector or on the server (host "server"), in order, secrets masked; capped per call (a last one with dropped=true
//	                  says how much was not streamed; tool.result keeps the head and the tail)
//	tool.result       {step, call_id, name, output, is_error, blocked, truncated, duration_ms}
//	approval.required runner.ApprovalRequired: the turn stopped for a person's decision
//	error             {code, message}: why the turn failed, timed out or was cancelled
//	done              runner.Done: the last event of every turn; the session is saved
//
// The runner (server/agent/runner) owns the run and numbers its events;
// this file only maps HTTP to Launch/Continue and its Events to SSE records.

// ChatRequest is the body of POST /api/chat.
type ChatRequest struct {
	Message   string `json:"message" validate:"required,min=1,max=32000" doc:"the user's prompt"`
	SessionID string `json:"session_id" validate:"max=64" doc:"continue this session (its next turn); absent starts a new session"`
	Name      string `json:"name" validate:"max=120,pattern=^[A-Za-z0-9][A-Za-z0-9._-]*$" doc:"optional handle of a new session, to resume it by name"`
	AgentType string `json:"agent_type" validate:"oneof=general sre security cost kubernetes database" doc:"profile of a new session; default general"`
}

// SessionEventsQuery are the parameters of GET /api/sessions/{session_id}/events.
type SessionEventsQuery struct {
	After *int64 `query:"after" validate:"gte=0" doc:"replay events after this id (as Last-Event-ID, which wins when both are sent)"`
}

// chatRoutes: the streaming chat.
func (s *Server) chatRoutes() []*Route {
	return []*Route{
		{Method: "POST", Path: "/api/chat", Summary: "Chat with the agent: start a session or send its next turn; answers text/event-stream (see the chat event names)", Tags: []string{"sessions"}, Auth: AuthAny, Perm: PermSessionsWrite, Project: true, Body: ChatRequest{}, Status: 200, MaxBody: 64 << 10, Handle: s.handleChat},
	}
}

// handleChat is POST /api/chat.
func (s *Server) handleChat(c *Ctx) error {
	if err := s.allowAgentTurn(c); err != nil {
		return err
	}
	var req ChatRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	key, err := idempotencyKey(c)
	if err != nil {
		return err
	}
	info := runner.RunInfo{OrgID: c.OrgID(), ProjectID: c.ProjectID(), UserID: c.ID.UserID,
		Source: store.SourceWebchat, TriggerSource: store.TriggerWeb}
	var first int64
	if req.SessionID != "" {
		if !store.ValidID(req.SessionID) {
			return store.NotFound("session")
		}
		info.SessionID = req.SessionID
		// A replayed Idempotency-Key streams the stored events of the turn it started.
		t, err := s.runner.Continue(c.Context(), info, req.Message, key)
		if err != nil {
			return err
		}
		first = t.FirstSeq
	} else {
		if s.runner.Draining() {
			return runner.ErrDraining
		}
		sess := &store.AgentSession{OrgID: c.OrgID(), ProjectID: c.ProjectID(), Name: req.Name, Title: runner.TitleFrom(req.Message),
			FirstPrompt: req.Message, AgentType: req.AgentType, Source: store.SourceWebchat, TriggerSource: store.TriggerWeb,
			CreatedBy: c.ID.UserID}
		if err := s.db.StartChatSession(c.Context(), sess); err != nil {
			return err
		}
		info.SessionID = sess.ID
		if err := s.runner.Launch(info, req.Message, sess.AgentType); err != nil {
			return err
		}
		first = 1
		c.Audit("session.started", "success", "session", sess.ID, map[string]any{"source": store.SourceWebchat})
	}
	c.W.Header().Set("X-Session-ID", info.SessionID)
	w, err := startSSE(c.W)
	if err != nil {
		return err
	}
	// The turn's hub was registered before launch returned: streamSession
	// follows it live, or reads the stored events if the turn already ended.
	if err := s.streamSession(c.Context(), w, info.SessionID, first-1); err != nil && c.Context().Err() == nil {
		s.log.Warn("chat stream ended with an error", "session_id", info.SessionID, "err", err)
	}
	return nil
}

// handleSessionEvents is GET /api/sessions/{session_id}/events.
func (s *Server) handleSessionEvents(c *Ctx) error {
	a, err := s.sessionParam(c)
	if err != nil {
		return err
	}
	var q SessionEventsQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	var after int64
	if q.After != nil {
		after = *q.After
	}
	if h := strings.TrimSpace(c.R.Header.Get("Last-Event-ID")); h != "" {
		n, err := strconv.ParseInt(h, 10, 64)
		if err != nil || n < 0 {
			return invalid("Last-Event-ID must be an event id (a non-negative integer)", "int_parsing", "header", "last-event-id")
		}
		after = n
	}
	w, err := startSSE(c.W)
	if err != nil {
		return err
	}
	if err := s.streamSession(c.Context(), w, a.ID, after); err != nil && c.Context().Err() == nil {
		s.log.Warn("session stream ended with an error", "session_id", a.ID, "err", err)
	}
	return nil
}
