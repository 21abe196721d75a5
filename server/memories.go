package server

import (
	"errors"
	"time"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/server/knowledge"
	"github.com/opsagent/opsagent/store"
)

// Memories are the agent's long-term facts about a project (scope project) or
// its whole org (scope org). People review, correct and delete them here; the
// agent saves them with its remember tool (knowledge.Base.Remember).

// MemoryOut is one memory.
type MemoryOut struct {
	ID              string    `json:"id"`
	Scope           string    `json:"scope"`
	Key             string    `json:"key"`
	Title           string    `json:"title"`
	Text            string    `json:"text"`
	Tags            []string  `json:"tags"`
	SourceSessionID *string   `json:"source_session_id"`
	CreatedBy       *string   `json:"created_by"`
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`
}

// MemoryListOut is a page of memories.
type MemoryListOut struct {
	Items  []MemoryOut `json:"items"`
	Total  int         `json:"total"`
	Limit  int         `json:"limit"`
	Offset int         `json:"offset"`
}

// MemoryCreate saves a memory; an existing memory of the same scope and key is updated (200 instead of 201).
type MemoryCreate struct {
	Scope           string   `json:"scope" validate:"oneof=project org"`
	Key             string   `json:"key" validate:"required,min=1,max=120,pattern=^[A-Za-z0-9][A-Za-z0-9._:/-]{0,119}$"`
	Title           string   `json:"title" validate:"max=200"`
	Text            string   `json:"text" validate:"required,min=1,max=65536"`
	Tags            []string `json:"tags" validate:"max=32"`
	SourceSessionID string   `json:"source_session_id" validate:"max=200"`
}

// MemoryUpdate edits a memory; absent fields stay.
type MemoryUpdate struct {
	Title *string   `json:"title" validate:"nonnull,max=200"`
	Text  *string   `json:"text" validate:"nonnull,min=1,max=65536"`
	Tags  *[]string `json:"tags" validate:"nonnull,max=32"`
}

// MemoryListQuery filters memories.
type MemoryListQuery struct {
	Scope  string `query:"scope" validate:"oneof=project org"`
	Q      string `query:"q" validate:"max=200"`
	Limit  int    `query:"limit" default:"50" validate:"gte=1,lte=200"`
	Offset int    `query:"offset" default:"0" validate:"gte=0"`
}

func (s *Server) memoryRoutes() []*Route {
	tags := []string{"memories"}
	return []*Route{
		{Method: "GET", Path: "/api/memories", Summary: "List the memories a project sees (its own and its org's), most recent first", Tags: tags, Auth: AuthAny, Perm: PermKnowledgeRead, Project: true, Query: MemoryListQuery{}, Resp: MemoryListOut{}, Status: 200, MCP: true, Handle: s.handleListMemories},
		{Method: "POST", Path: "/api/memories", Summary: "Save a memory (the same scope and key updates it)", Tags: tags, Auth: AuthAny, Perm: PermKnowledgeEdit, Project: true, Body: MemoryCreate{}, Resp: MemoryOut{}, Status: 201, MaxBody: 256 << 10, MCP: true, Handle: s.handleCreateMemory},
		{Method: "GET", Path: "/api/memories/{memory_id}", Summary: "Read one memory", Tags: tags, Auth: AuthAny, Perm: PermKnowledgeRead, Project: true, Resp: MemoryOut{}, Status: 200, MCP: true, Handle: s.handleGetMemory},
		{Method: "PATCH", Path: "/api/memories/{memory_id}", Summary: "Edit a memory", Tags: tags, Auth: AuthAny, Perm: PermKnowledgeEdit, Project: true, Body: MemoryUpdate{}, Resp: MemoryOut{}, Status: 200, MaxBody: 256 << 10, Handle: s.handleUpdateMemory},
		{Method: "DELETE", Path: "/api/memories/{memory_id}", Summary: "Delete a memory", Tags: tags, Auth: AuthAny, Perm: PermKnowledgeEdit, Project: true, Status: 204, Handle: s.handleDeleteMemory},
	}
}

func optStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func memoryOut(m *store.Memory) MemoryOut {
	return MemoryOut{ID: m.ID, Scope: m.Scope, Key: m.Key, Title: m.Title, Text: m.Text, Tags: m.Tags,
		SourceSessionID: optStr(m.SourceSessionID), CreatedBy: optStr(m.CreatedBy), CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
}

// memoryError maps the knowledge package's input errors to a 422 at the body field.
func memoryError(err error) error {
	var fe *knowledge.FieldError
	if errors.As(err, &fe) {
		return invalid(fe.Msg, "value_error", "body", fe.Field)
	}
	var re *rag.Error
	if errors.As(err, &re) {
		return invalid(re.Error(), "value_error", "body", re.Field)
	}
	return err
}

// handleListMemories is GET /api/memories.
func (s *Server) handleListMemories(c *Ctx) error {
	var q MemoryListQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	ms, total, err := s.knowledge.List(c.Context(), store.MemoryFilter{OrgID: c.OrgID(), ProjectID: c.ProjectID(),
		Scope: q.Scope, Query: q.Q, Limit: q.Limit, Offset: q.Offset})
	if err != nil {
		return err
	}
	out := MemoryListOut{Items: make([]MemoryOut, 0, len(ms)), Total: total, Limit: q.Limit, Offset: q.Offset}
	for i := range ms {
		out.Items = append(out.Items, memoryOut(&ms[i]))
	}
	return c.JSON(200, out)
}

// handleCreateMemory is POST /api/memories.
func (s *Server) handleCreateMemory(c *Ctx) error {
	var req MemoryCreate
	if err := c.Bind(&req); err != nil {
		return err
	}
	m, created, err := s.knowledge.Remember(c.Context(), knowledge.RememberInput{OrgID: c.OrgID(), ProjectID: c.ProjectID(),
		Scope: req.Scope, Key: req.Key, Title: req.Title, Text: req.Text, Tags: req.Tags, SessionID: req.SourceSessionID, ActorID: c.ID.UserID})
	if err != nil {
		return memoryError(err)
	}
	status := 200
	if created {
		status = 201
	}
	return c.JSON(status, memoryOut(m))
}

// handleGetMemory is GET /api/memories/{memory_id}.
func (s *Server) handleGetMemory(c *Ctx) error {
	id, err := c.IDParam("memory_id")
	if err != nil {
		return err
	}
	m, err := s.knowledge.Get(c.Context(), c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	return c.JSON(200, memoryOut(m))
}

// handleUpdateMemory is PATCH /api/memories/{memory_id}.
func (s *Server) handleUpdateMemory(c *Ctx) error {
	id, err := c.IDParam("memory_id")
	if err != nil {
		return err
	}
	var req MemoryUpdate
	if err := c.Bind(&req); err != nil {
		return err
	}
	m, err := s.knowledge.Update(c.Context(), c.OrgID(), c.ProjectID(), id, store.MemoryPatch{Title: req.Title, Text: req.Text, Tags: req.Tags})
	if err != nil {
		return memoryError(err)
	}
	return c.JSON(200, memoryOut(m))
}

// handleDeleteMemory is DELETE /api/memories/{memory_id}.
func (s *Server) handleDeleteMemory(c *Ctx) error {
	id, err := c.IDParam("memory_id")
	if err != nil {
		return err
	}
	if err := s.knowledge.Forget(c.Context(), c.OrgID(), c.ProjectID(), id); err != nil {
		return err
	}
	c.Audit("memory.deleted", "success", "memory", id, nil)
	return c.NoContent()
}
