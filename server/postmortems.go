package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/scheduler"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/server/postmortem"
	"github.com/opsagent/opsagent/store"
)

// Postmortem drafts: when an incident resolves, the agent drafts its
// postmortem from the recorded facts (postmortem_facts.go builds the sheet)
// into the project's knowledge store as a draft document, for a person to
// edit (knowledge documents API) and publish here.

// postmortemDraftTimeout bounds one draft (records, model call, indexing).
const postmortemDraftTimeout = 3 * time.Minute

// PostmortemOut is an incident's postmortem.
type PostmortemOut struct {
	IncidentID  string     `json:"incident_id"`
	ProjectID   string     `json:"project_id"`
	Status      string     `json:"status" doc:"drafting, draft, published, failed"`
	Collection  string     `json:"collection" doc:"knowledge collection of the document (edit it through the knowledge documents API)"`
	Document    string     `json:"document" doc:"knowledge document name"`
	Markdown    string     `json:"markdown" doc:"the document as it is now (empty while drafting)"`
	Cited       []string   `json:"cited" doc:"record labels the draft cites, each checked to exist (incident:, timeline:, event:, session:, approval:)"`
	Invalid     []string   `json:"invalid_citations" doc:"labels the model wrote that match no record; removed from the draft"`
	Model       string     `json:"model" doc:"empty when drafted from the facts alone (no model configured)"`
	Error       string     `json:"error"`
	PublishedBy *string    `json:"published_by"`
	PublishedAt *time.Time `json:"published_at"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
}

// PostmortemPage lists postmortems.
type PostmortemPage struct {
	Items  []PostmortemOut `json:"items"`
	Total  int             `json:"total"`
	Limit  int             `json:"limit"`
	Offset int             `json:"offset"`
}

// PostmortemQuery pages the list.
type PostmortemQuery struct {
	Limit  int `query:"limit" default:"25" validate:"gte=1,lte=200"`
	Offset int `query:"offset" default:"0" validate:"gte=0"`
}

// PostmortemTemplateIO is an org's postmortem template: its section headings in order.
type PostmortemTemplateIO struct {
	Sections []string `json:"sections" validate:"required,min=1,max=20"`
}

func (s *Server) postmortemRoutes() []*Route {
	tags := []string{"postmortems"}
	return []*Route{
		{Method: "GET", Path: "/api/postmortems", Summary: "List the project's postmortems (drafts and published)", Tags: tags, Auth: AuthAny, Perm: PermKnowledgeRead, Project: true, Query: PostmortemQuery{}, Resp: PostmortemPage{}, Status: 200, MCP: true, Handle: s.handleListPostmortems},
		{Method: "GET", Path: "/api/postmortems/{incident_id}", Summary: "Read an incident's postmortem with its document", Tags: tags, Auth: AuthAny, Perm: PermKnowledgeRead, Project: true, Resp: PostmortemOut{}, Status: 200, MCP: true, Handle: s.handleGetPostmortem},
		{Method: "POST", Path: "/api/postmortems/{incident_id}/draft", Summary: "Draft (or redraft) the postmortem now from the recorded facts", Tags: tags, Auth: AuthAny, Perm: PermKnowledgeEdit, Project: true, Resp: PostmortemOut{}, Status: 201, Handle: s.handleDraftPostmortem},
		{Method: "POST", Path: "/api/postmortems/{incident_id}/publish", Summary: "Publish a reviewed draft", Tags: tags, Auth: AuthAny, Perm: PermKnowledgeEdit, Project: true, Resp: PostmortemOut{}, Status: 200, Handle: s.handlePublishPostmortem},
		{Method: "GET", Path: "/api/postmortem-template", Summary: "The org's postmortem template (section headings)", Tags: tags, Auth: AuthAny, Perm: PermOrgRead, Resp: PostmortemTemplateIO{}, Status: 200, Handle: s.handleGetPostmortemTemplate},
		{Method: "PUT", Path: "/api/postmortem-template", Summary: "Set the org's postmortem template", Tags: tags, Auth: AuthAny, Perm: PermOrgWrite, Body: PostmortemTemplateIO{}, Resp: PostmortemTemplateIO{}, Status: 200, MaxBody: 16 << 10, Handle: s.handlePutPostmortemTemplate},
	}
}

func postmortemDoc(incidentID string) string { return "postmortem-" + incidentID + ".md" }

func (s *Server) postmortemOut(ctx context.Context, p *store.Postmortem) PostmortemOut {
	o := PostmortemOut{IncidentID: p.IncidentID, ProjectID: p.ProjectID, Status: p.Status, Collection: rag.CollectionIncidents, Document: p.Document,
		Cited: p.Cited, Invalid: p.Invalid, Model: p.Model, Error: p.Error, PublishedBy: optStr(p.PublishedBy), PublishedAt: p.PublishedAt,
		CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
	if o.Cited == nil {
		o.Cited = []string{}
	}
	if o.Invalid == nil {
		o.Invalid = []string{}
	}
	if p.Status != store.PostmortemDrafting {
		if d, err := s.rag.Get(ctx, rag.Scope{OrgID: p.OrgID, ProjectID: p.ProjectID}, rag.CollectionIncidents, p.Document); err == nil {
			o.Markdown = string(stripFrontMatter(d.Content))
		}
	}
	return o
}

// stripFrontMatter drops the YAML block the knowledge store keeps tags in.
func stripFrontMatter(b []byte) []byte {
	if !bytes.HasPrefix(b, []byte("---\n")) {
		return b
	}
	if i := bytes.Index(b[4:], []byte("\n---\n")); i >= 0 {
		return bytes.TrimLeft(b[4+i+5:], "\n")
	}
	return b
}

// draftPostmortemLater drafts a resolved incident's postmortem after the
// request (or dispatch) that resolved it; the server waits for it at
// shutdown. A draft that exists already is left alone.
func (s *Server) draftPostmortemLater(inc *store.Incident) {
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		// Shutdown ends a draft in progress (it is marked failed and can be
		// redrafted); an alert storm's resolutions draft a few at a time.
		ctx, cancel := context.WithTimeout(s.stopping, postmortemDraftTimeout)
		defer cancel()
		select {
		case s.bx().drafting <- struct{}{}:
			defer func() { <-s.bx().drafting }()
		case <-ctx.Done():
			return
		}
		if err := s.draftPostmortem(ctx, inc.OrgID, inc.ProjectID, inc.ID, false); err != nil && !store.IsNotFound(err) {
			s.log.Error("postmortem draft", "incident_id", inc.ID, "err", err)
		}
	}()
}

// draftPostmortem writes the draft: fact sheet, model (or the facts alone
// without one), citation check, knowledge document, state.
func (s *Server) draftPostmortem(ctx context.Context, orgID, projectID, incidentID string, redraft bool) error {
	started, err := s.db.StartPostmortem(ctx, orgID, projectID, incidentID, postmortemDoc(incidentID), redraft)
	if err != nil || !started {
		return err
	}
	md, res, model, note, err := s.writePostmortem(ctx, orgID, projectID, incidentID)
	if err != nil {
		_ = s.db.FinishPostmortem(context.Background(), incidentID, nil, nil, model, err.Error())
		return err
	}
	scope := rag.Scope{OrgID: orgID, ProjectID: projectID}
	if _, err := s.rag.Put(ctx, scope, rag.CollectionIncidents, postmortemDoc(incidentID), []byte(md), []string{"postmortem", "draft"}); err != nil {
		_ = s.db.FinishPostmortem(context.Background(), incidentID, nil, nil, model, "the draft could not be saved: "+err.Error())
		return err
	}
	if err := s.db.FinishPostmortem(ctx, incidentID, res.Cited, res.Invalid, model, ""); err != nil {
		return err
	}
	s.audit(ctx, AuditEvent{Action: "postmortem.drafted", Outcome: "success", OrgID: orgID, ProjectID: projectID, TargetType: "incident",
		TargetID: incidentID, Detail: map[string]any{"model": model, "cited": len(res.Cited), "invalid_citations": len(res.Invalid), "note": note}})
	return nil
}

// writePostmortem builds the sheet, asks the model and verifies its
// citations. note says why the facts alone were used, if they were.
func (s *Server) writePostmortem(ctx context.Context, orgID, projectID, incidentID string) (string, postmortem.Result, string, string, error) {
	recs, err := s.db.FindIncidentRecords(ctx, orgID, projectID, incidentID)
	if err != nil {
		return "", postmortem.Result{}, "", "", err
	}
	sheet := factSheet(recs)
	s.investigationFacts(ctx, recs.Incident, sheet) // postmortem_findings.go
	template, err := s.db.PostmortemTemplate(ctx, orgID)
	if err != nil || len(template) == 0 {
		template = postmortem.DefaultTemplate
	}
	body, model, note := "", "", ""
	provider, model, err := s.runner.Provider(ctx, orgID)
	if err == nil {
		// A project or org over its spending cap gets the facts alone.
		if b := s.budgetFor(ctx, runner.RunInfo{OrgID: orgID, ProjectID: projectID}); b != nil {
			if berr := b.Allow(llm.Usage{}, 0); berr != nil {
				provider, err = nil, berr
			}
		}
	}
	if err == nil {
		req := llm.Request{Model: model, System: postmortem.System(template), MaxTokens: 4096, Messages: []llm.Message{{Role: llm.RoleUser,
			Content: "Fact sheet:\n\n" + sheet.Text() + "\nDraft the postmortem now."}}}
		resp, err := provider.Stream(ctx, req, func(llm.Delta) {})
		if err == nil {
			s.recordDraftCall(ctx, orgID, projectID, incidentID, model, resp.Usage)
		}
		if err == nil && strings.TrimSpace(resp.Content) != "" {
			body = resp.Content
		} else {
			note = fmt.Sprintf("the model call failed (%v); drafted from the facts alone", err)
		}
	} else if errors.Is(err, scheduler.ErrNoLLM) {
		note = "no model configured; drafted from the facts alone"
	} else {
		note = "the model is unavailable (" + err.Error() + "); drafted from the facts alone"
	}
	if body == "" {
		body, model = postmortem.Fallback(sheet, template), ""
	}
	res := postmortem.Verify(body, sheet, template)
	var b strings.Builder
	fmt.Fprintf(&b, "# Postmortem: %s\n\n", recs.Incident.Title)
	b.WriteString("> **Draft** written by opsagent from the records of incident " + incidentID + ". Every label in square brackets cites a record; " +
		"anything without one is not from the records. Review, edit and publish.\n")
	if note != "" {
		b.WriteString("> Note: " + note + ".\n")
	}
	if len(res.Invalid) > 0 {
		fmt.Fprintf(&b, "> %d citation(s) the model wrote matched no record and were removed.\n", len(res.Invalid))
	}
	b.WriteString("\n" + res.Markdown + postmortem.Sources(sheet, res.Cited))
	return b.String(), res, model, note, nil
}

// handleListPostmortems is GET /api/postmortems.
func (s *Server) handleListPostmortems(c *Ctx) error {
	var q PostmortemQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	ps, total, err := s.db.FindPostmortems(c.Context(), c.OrgID(), c.ProjectID(), q.Limit, q.Offset)
	if err != nil {
		return err
	}
	page := PostmortemPage{Items: make([]PostmortemOut, 0, len(ps)), Total: total, Limit: q.Limit, Offset: q.Offset}
	for i := range ps {
		o := s.postmortemOut(c.Context(), &ps[i])
		o.Markdown = "" // the list stays small; read one for its document
		page.Items = append(page.Items, o)
	}
	return c.JSON(200, page)
}

// postmortemParam reads the path's incident_id and the caller's project's
// postmortem of it (404 for another project's or org's incident).
func (s *Server) postmortemParam(c *Ctx) (string, *store.Postmortem, error) {
	id, err := c.IDParam("incident_id")
	if err != nil {
		return "", nil, err
	}
	p, err := s.db.FindPostmortem(c.Context(), c.OrgID(), c.ProjectID(), id)
	return id, p, err
}

// handleGetPostmortem is GET /api/postmortems/{incident_id}.
func (s *Server) handleGetPostmortem(c *Ctx) error {
	_, p, err := s.postmortemParam(c)
	if err != nil {
		return err
	}
	return c.JSON(200, s.postmortemOut(c.Context(), p))
}

// handleDraftPostmortem is POST /api/postmortems/{incident_id}/draft: a
// model call, so it counts against the caller's agent turns.
func (s *Server) handleDraftPostmortem(c *Ctx) error {
	id, err := c.IDParam("incident_id")
	if err != nil {
		return err
	}
	if ok, retry := s.limits.agentTurns.Allow("postmortem:" + c.ID.UserID + c.ID.KeyID); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	ctx, cancel := context.WithTimeout(c.Context(), postmortemDraftTimeout)
	defer cancel()
	if err := s.draftPostmortem(ctx, c.OrgID(), c.ProjectID(), id, true); err != nil {
		return err
	}
	p, err := s.db.FindPostmortem(c.Context(), c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	c.Audit("postmortem.redrafted", "success", "incident", id, map[string]any{"status": p.Status})
	return c.JSON(201, s.postmortemOut(c.Context(), p))
}

// handlePublishPostmortem is POST /api/postmortems/{incident_id}/publish:
// the document keeps its (edited) text and is tagged published.
func (s *Server) handlePublishPostmortem(c *Ctx) error {
	id, p, err := s.postmortemParam(c)
	if err != nil {
		return err
	}
	scope := rag.Scope{OrgID: c.OrgID(), ProjectID: c.ProjectID()}
	d, err := s.rag.Get(c.Context(), scope, rag.CollectionIncidents, p.Document)
	if err != nil {
		return store.Errorf(store.EConflict, "the draft document is missing from the knowledge store; redraft it")
	}
	// The row and the document in one transaction (on a shared database the document is a row too).
	p, err = s.db.PublishPostmortem(c.Context(), c.OrgID(), c.ProjectID(), id, c.ID.UserID, func(ctx context.Context, p *store.Postmortem) error {
		_, err := s.rag.Put(ctx, scope, rag.CollectionIncidents, p.Document, stripFrontMatter(d.Content), []string{"postmortem", "published"})
		return err
	})
	if err != nil {
		if p != nil {
			_ = s.rag.Refresh(context.WithoutCancel(c.Context()), scope, rag.CollectionIncidents, p.Document)
		}
		return err
	}
	c.Audit("postmortem.published", "success", "incident", id, nil)
	return c.JSON(200, s.postmortemOut(c.Context(), p))
}

// handleGetPostmortemTemplate is GET /api/postmortem-template.
func (s *Server) handleGetPostmortemTemplate(c *Ctx) error {
	t, err := s.db.PostmortemTemplate(c.Context(), c.OrgID())
	if err != nil {
		return err
	}
	if len(t) == 0 {
		t = postmortem.DefaultTemplate
	}
	return c.JSON(200, PostmortemTemplateIO{Sections: t})
}

// handlePutPostmortemTemplate is PUT /api/postmortem-template.
func (s *Server) handlePutPostmortemTemplate(c *Ctx) error {
	var req PostmortemTemplateIO
	if err := c.Bind(&req); err != nil {
		return err
	}
	for i, h := range req.Sections {
		if h = strings.TrimSpace(h); h == "" || len(h) > 100 || strings.ContainsAny(h, "\n#") {
			return invalid("a section heading is 1 to 100 characters on one line, without #", "value_error", "body", "sections", i)
		}
		req.Sections[i] = h
	}
	if err := s.db.PutPostmortemTemplate(c.Context(), c.OrgID(), c.ID.UserID, req.Sections); err != nil {
		return err
	}
	c.Audit("postmortem.template_updated", "success", "organization", c.OrgID(), map[string]any{"sections": len(req.Sections)})
	return c.JSON(200, req)
}

// alertTitles summarises a delivery's normalized alerts for the fact sheet.
func alertTitles(raw string) string {
	var alerts []struct {
		Title    string            `json:"title"`
		Severity string            `json:"severity"`
		Status   string            `json:"status"`
		Labels   map[string]string `json:"labels"`
	}
	_ = json.Unmarshal([]byte(raw), &alerts)
	var parts []string
	for _, a := range alerts {
		parts = append(parts, fmt.Sprintf("%s (%s, %s)", a.Title, a.Severity, a.Status))
	}
	return strings.Join(parts, "; ")
}

// recordDraftCall counts a draft's model call against the spending caps
// (store.FindSpend reads llm_calls beside the sessions).
func (s *Server) recordDraftCall(ctx context.Context, orgID, projectID, incidentID, model string, u llm.Usage) {
	prices, err := ParseLLMPrices(s.cfg.LLMPrices)
	if err != nil {
		prices = llm.DefaultPrices()
	}
	c := &store.LLMCall{OrgID: orgID, ProjectID: projectID, Purpose: "postmortem", SubjectID: incidentID, Model: model,
		TokensIn: int64(u.InputTokens), TokensOut: int64(u.OutputTokens), Cost: prices.Cost(model, u)}
	if err := s.db.RecordLLMCall(context.WithoutCancel(ctx), c); err != nil {
		s.log.Error("postmortem: model usage not recorded", "incident_id", incidentID, "err", err)
	}
}
