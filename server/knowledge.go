package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/store"
)

// Knowledge documents live as files under DATA_DIR/rag/docs/<org>/<project>/<collection>/<name> (org-wide
// ones under <org>/_org), which operators may also edit by hand. A document is addressed by collection and
// name; names are relative slash paths ("k8s/restart-pod.md"), so they travel in the query string of the
// by-name routes rather than in a path segment. scope=org addresses the org-wide documents, which every
// project of the org finds in its searches; a project's own documents are never found by another project.

// DocumentOut describes a document; Content is filled by the by-name read only.
type DocumentOut struct {
	Collection string    `json:"collection"`
	Name       string    `json:"name"`
	Scope      string    `json:"scope"` // project or org
	Title      string    `json:"title"`
	Tags       []string  `json:"tags"`
	Size       int64     `json:"size"`
	SHA256     string    `json:"sha256"`
	ModifiedAt time.Time `json:"modified_at"`
	Content    *string   `json:"content,omitempty"`
}

// DocumentListOut is a page of documents.
type DocumentListOut struct {
	Items  []DocumentOut `json:"items"`
	Total  int           `json:"total"`
	Limit  int           `json:"limit"`
	Offset int           `json:"offset"`
}

// DocumentCreate uploads a text document (Markdown or plain text). Multipart uploads send the same
// fields as form fields and the content as the file part "file" (name defaults to the file name).
type DocumentCreate struct {
	Collection string   `json:"collection" validate:"required,oneof=runbooks facts incidents"`
	Name       string   `json:"name" validate:"required,min=1,max=255"`
	Content    string   `json:"content" validate:"required"`
	Tags       []string `json:"tags" validate:"max=32"`
	Scope      string   `json:"scope" validate:"oneof=project org"`
}

// DocumentUpdate replaces a document's content; tags, when present, replace its tags.
type DocumentUpdate struct {
	Content string    `json:"content" validate:"required"`
	Tags    *[]string `json:"tags" validate:"max=32"`
}

// DocumentListQuery filters the document list.
type DocumentListQuery struct {
	Collection string `query:"collection" validate:"oneof=runbooks facts incidents memories"`
	Scope      string `query:"scope" default:"project" validate:"oneof=project org"`
	Limit      int    `query:"limit" default:"50" validate:"gte=1,lte=200"`
	Offset     int    `query:"offset" default:"0" validate:"gte=0"`
}

// DocumentRef names one document in the query string.
type DocumentRef struct {
	Collection string `query:"collection" validate:"required,oneof=runbooks facts incidents memories"`
	Name       string `query:"name" validate:"required,min=1,max=255"`
	Scope      string `query:"scope" default:"project" validate:"oneof=project org"`
}

// SearchQuery is a knowledge search. collection and tag take comma-separated lists; every tag must match.
type SearchQuery struct {
	Q          string `query:"q" validate:"max=1024,required_without=tag" doc:"search text"`
	Collection string `query:"collection" validate:"max=200"`
	Tag        string `query:"tag" validate:"max=1000" doc:"comma-separated tags every hit must carry"`
	Limit      int    `query:"limit" default:"10" validate:"gte=1,lte=100"`
}

// SearchHitOut is one ranked chunk.
type SearchHitOut struct {
	Collection string   `json:"collection"`
	Name       string   `json:"name"`
	Scope      string   `json:"scope"`
	Title      string   `json:"title"`
	Heading    string   `json:"heading"`  // the nearest heading above the chunk
	Headings   []string `json:"headings"` // the heading path, outermost first
	Tags       []string `json:"tags"`
	Snippet    string   `json:"snippet"`
	Score      float64  `json:"score"`
}

// SearchOut is the ranked result of a search.
type SearchOut struct {
	Items []SearchHitOut `json:"items"`
	Total int            `json:"total"`
}

// docMaxBody: a document is at most 1 MiB; JSON escaping may double it.
const docMaxBody = 2*rag.DefaultMaxDocBytes + 64<<10

func (s *Server) knowledgeRoutes() []*Route {
	tags := []string{"knowledge"}
	return []*Route{
		{Method: "GET", Path: "/api/knowledge/documents", Summary: "List knowledge documents (paginated; filter by collection)", Tags: tags, Auth: AuthAny, Perm: PermKnowledgeRead, Project: true, Query: DocumentListQuery{}, Resp: DocumentListOut{}, Status: 200, MCP: true, Handle: s.handleListDocuments},
		{Method: "POST", Path: "/api/knowledge/documents", Summary: "Upload a Markdown or text document (JSON, or multipart with a file part)", Tags: tags, Auth: AuthAny, Perm: PermKnowledgeEdit, Project: true, Body: DocumentCreate{}, Resp: DocumentOut{}, Status: 201, MaxBody: docMaxBody, Handle: s.handleCreateDocument},
		{Method: "GET", Path: "/api/knowledge/documents/by-name", Summary: "Read one document with its content", Tags: tags, Auth: AuthAny, Perm: PermKnowledgeRead, Project: true, Query: DocumentRef{}, Resp: DocumentOut{}, Status: 200, MCP: true, Handle: s.handleGetDocument},
		{Method: "PUT", Path: "/api/knowledge/documents/by-name", Summary: "Replace a document's content (and tags)", Tags: tags, Auth: AuthAny, Perm: PermKnowledgeEdit, Project: true, Query: DocumentRef{}, Body: DocumentUpdate{}, Resp: DocumentOut{}, Status: 200, MaxBody: docMaxBody, Handle: s.handleUpdateDocument},
		{Method: "DELETE", Path: "/api/knowledge/documents/by-name", Summary: "Delete a document", Tags: tags, Auth: AuthAny, Perm: PermKnowledgeEdit, Project: true, Query: DocumentRef{}, Status: 204, Handle: s.handleDeleteDocument},
		{Method: "GET", Path: "/api/knowledge/search", Summary: "Search runbooks, facts, incidents and memories: ranked snippets with their document and heading", Tags: tags, Auth: AuthAny, Perm: PermKnowledgeRead, Project: true, Query: SearchQuery{}, Resp: SearchOut{}, Status: 200, MCP: true, Handle: s.handleSearchKnowledge},
		{Method: "POST", Path: "/api/knowledge/sync", Summary: "Re-scan the document files now (hand edits are otherwise picked up within 30 s)", Tags: tags, Auth: AuthAny, Perm: PermKnowledgeEdit, Status: 204, Handle: s.handleSyncKnowledge},
	}
}

// ragScope is the rag scope of a project route; scope=org means the org-wide documents.
func ragScope(c *Ctx, scope string) rag.Scope {
	if scope == "org" {
		return rag.Scope{OrgID: c.OrgID()}
	}
	return rag.Scope{OrgID: c.OrgID(), ProjectID: c.ProjectID()}
}

func docOut(d rag.Doc, withContent bool) DocumentOut {
	o := DocumentOut{Collection: d.Collection, Name: d.Name, Scope: "project", Title: d.Title, Tags: d.Tags,
		Size: d.Size, SHA256: d.SHA256, ModifiedAt: d.ModTime}
	if d.Scope.ProjectID == "" {
		o.Scope = "org"
	}
	if o.Tags == nil {
		o.Tags = []string{}
	}
	if withContent {
		c := string(d.Content)
		o.Content = &c
	}
	return o
}

// ragError maps the rag package's errors: a caller's mistake is a 422 at the field it names (loc is
// "body" or "query"), too large a 413, a missing document a 404.
func ragError(err error, loc string) error {
	var re *rag.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, rag.ErrNotFound):
		return store.NotFound("document")
	case errors.Is(err, rag.ErrExists):
		return &store.Error{Code: store.EConflict, Message: "a document with this name exists; PUT to replace it", Reason: "document_exists"}
	case errors.Is(err, rag.ErrTooLarge):
		return &http.MaxBytesError{Limit: rag.DefaultMaxDocBytes}
	case errors.Is(err, rag.ErrClosed):
		return &store.Error{Code: store.EInternal, Message: "knowledge store closed", Err: err}
	case errors.As(err, &re):
		return invalid(re.Error(), "value_error", loc, re.Field)
	}
	return err
}

// handleListDocuments is GET /api/knowledge/documents.
func (s *Server) handleListDocuments(c *Ctx) error {
	var q DocumentListQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	cols := rag.Collections()
	if q.Collection != "" {
		cols = []string{q.Collection}
	}
	var all []rag.Doc
	for _, col := range cols {
		docs, err := s.rag.List(c.Context(), ragScope(c, q.Scope), col)
		if err != nil {
			return ragError(err, "query")
		}
		all = append(all, docs...)
	}
	out := DocumentListOut{Items: []DocumentOut{}, Total: len(all), Limit: q.Limit, Offset: q.Offset}
	for i := q.Offset; i < len(all) && i < q.Offset+q.Limit; i++ {
		out.Items = append(out.Items, docOut(all[i], false))
	}
	return c.JSON(200, out)
}

// handleCreateDocument is POST /api/knowledge/documents (JSON or multipart/form-data).
func (s *Server) handleCreateDocument(c *Ctx) error {
	req, err := bindDocumentCreate(c)
	if err != nil {
		return err
	}
	scope := ragScope(c, req.Scope)
	unlock := s.billing.LockKnowledge(c.OrgID())
	defer unlock()
	if _, err := s.rag.Get(c.Context(), scope, req.Collection, req.Name); err == nil {
		return &store.Error{Code: store.EConflict, Message: "a document with this name exists; PUT to replace it", Reason: "document_exists"}
	} else if !errors.Is(err, rag.ErrNotFound) {
		return ragError(err, "body")
	}
	var tags []string
	if req.Tags != nil {
		tags = req.Tags
	}
	if err := s.billing.CheckKnowledge(c.Context(), c.OrgID(), int64(len(req.Content)), 0); err != nil {
		return err
	}
	// Create, not Put: another server may create the same name between the check above and this write.
	// On a cluster the quota is checked again in the write's transaction (knowledgeQuota).
	d, err := s.rag.Create(s.knowledgeQuota(c), scope, req.Collection, req.Name, []byte(req.Content), tags)
	if err != nil {
		return ragError(err, "body")
	}
	c.Audit("knowledge.document_created", "success", "document", req.Collection+"/"+req.Name, map[string]any{"scope": docOut(d, false).Scope})
	return c.JSON(201, docOut(d, false))
}

// handleGetDocument is GET /api/knowledge/documents/by-name.
func (s *Server) handleGetDocument(c *Ctx) error {
	var q DocumentRef
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	d, err := s.rag.Get(c.Context(), ragScope(c, q.Scope), q.Collection, q.Name)
	if err != nil {
		return ragError(err, "query")
	}
	return c.JSON(200, docOut(d, true))
}

// handleUpdateDocument is PUT /api/knowledge/documents/by-name.
func (s *Server) handleUpdateDocument(c *Ctx) error {
	var q DocumentRef
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	if q.Collection == rag.CollectionMemories {
		return invalid("Memories are edited through /api/memories", "value_error", "query", "collection")
	}
	var req DocumentUpdate
	if err := c.Bind(&req); err != nil {
		return err
	}
	scope := ragScope(c, q.Scope)
	unlock := s.billing.LockKnowledge(c.OrgID())
	defer unlock()
	old, err := s.rag.Get(c.Context(), scope, q.Collection, q.Name)
	if err != nil {
		return ragError(err, "query")
	}
	if err := s.billing.CheckKnowledge(c.Context(), c.OrgID(), int64(len(req.Content)), old.Size); err != nil {
		return err
	}
	var tags []string
	if req.Tags != nil {
		tags = append([]string{}, *req.Tags...)
	}
	d, err := s.rag.Put(s.knowledgeQuota(c), scope, q.Collection, q.Name, []byte(req.Content), tags)
	if err != nil {
		return ragError(err, "body")
	}
	c.Audit("knowledge.document_updated", "success", "document", q.Collection+"/"+q.Name, nil)
	return c.JSON(200, docOut(d, false))
}

// handleDeleteDocument is DELETE /api/knowledge/documents/by-name.
func (s *Server) handleDeleteDocument(c *Ctx) error {
	var q DocumentRef
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	if q.Collection == rag.CollectionMemories {
		return invalid("Memories are deleted through /api/memories", "value_error", "query", "collection")
	}
	if err := s.rag.Delete(c.Context(), ragScope(c, q.Scope), q.Collection, q.Name); err != nil {
		return ragError(err, "query")
	}
	c.Audit("knowledge.document_deleted", "success", "document", q.Collection+"/"+q.Name, nil)
	return c.NoContent()
}

// handleSearchKnowledge is GET /api/knowledge/search.
func (s *Server) handleSearchKnowledge(c *Ctx) error {
	var q SearchQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	hits, err := s.rag.Search(c.Context(), ragScope(c, "project"), rag.Query{Text: q.Q,
		Collections: splitList(q.Collection), Tags: splitList(q.Tag), Limit: q.Limit})
	if err != nil {
		var re *rag.Error
		if errors.As(err, &re) && re.Field == "text" {
			re.Field = "q"
		}
		if errors.As(err, &re) && re.Field == "tags" {
			re.Field = "tag"
		}
		return ragError(err, "query")
	}
	out := SearchOut{Items: make([]SearchHitOut, 0, len(hits)), Total: len(hits)}
	for _, h := range hits {
		o := SearchHitOut{Collection: h.Collection, Name: h.Name, Scope: "project", Title: h.Title,
			Headings: h.Headings, Tags: h.Tags, Snippet: h.Snippet, Score: h.Score}
		if h.OrgWide {
			o.Scope = "org"
		}
		if n := len(h.Headings); n > 0 {
			o.Heading = h.Headings[n-1]
		}
		if o.Headings == nil {
			o.Headings = []string{}
		}
		if o.Tags == nil {
			o.Tags = []string{}
		}
		out.Items = append(out.Items, o)
	}
	return c.JSON(200, out)
}

// handleSyncKnowledge is POST /api/knowledge/sync.
func (s *Server) handleSyncKnowledge(c *Ctx) error {
	if ok, retry := s.limits.knowledgeSync.Allow(c.OrgID()); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	ctx, cancel := context.WithTimeout(c.Context(), time.Minute)
	defer cancel()
	if err := s.rag.Sync(ctx); err != nil {
		return err
	}
	return c.NoContent()
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// knowledgeQuota is the request's context carrying the org's knowledge
// storage check for a document write to the database (PostgreSQL): there
// CheckKnowledge's usage may already be passed by an upload on another
// server, so the store checks again on the usage it reads in the write's
// own transaction (store.WithKnowledgeQuota). Files (the appliance) are
// written under LockKnowledge and ignore it.
func (s *Server) knowledgeQuota(c *Ctx) context.Context {
	return store.WithKnowledgeQuota(c.Context(), s.billing.KnowledgeQuota(c.OrgID()))
}
