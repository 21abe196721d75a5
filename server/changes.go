package server

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/opsagent/opsagent/server/ratelimit"
	"github.com/opsagent/opsagent/server/webhook"
	"github.com/opsagent/opsagent/store"
)

// The change feed (issue 36): deploys, releases, pushes to the default
// branch, pipelines, configuration changes and the agent's own approved
// actions, so an investigation can ask what changed before an alert.
// Changes come from the webhook receiver (changes_ingest.go), from
// POST /api/changes, and from approved agent actions.

// ChangeRatePerMinute bounds POST /api/changes per project, as a webhook's
// rate_limit_per_minute bounds its deliveries: a CI system looping on a
// failed step must not fill the feed.
const ChangeRatePerMinute = 600

// investigatorState is the change feed's and the investigations' runtime
// state on the server.
type investigatorState struct {
	once        sync.Once
	changePosts *ratelimit.Limiter
}

func (s *Server) inv() *investigatorState {
	s.investigator.once.Do(func() {
		s.investigator.changePosts = ratelimit.New(ChangeRatePerMinute, time.Minute)
		s.investigator.changePosts.Now = func() time.Time { return s.Now() } // tests move the server's clock
	})
	return &s.investigator
}

// ChangeOut is one change of the feed.
type ChangeOut struct {
	ID          string            `json:"id"`
	ProjectID   string            `json:"project_id"`
	Source      string            `json:"source" doc:"github, gitlab, generic, agent, api, kubernetes"`
	Kind        string            `json:"kind" doc:"deploy, config, release, push, pipeline, tag, action, rollout, ..."`
	Title       string            `json:"title"`
	Service     string            `json:"service"`
	Environment string            `json:"environment"`
	Description string            `json:"description"`
	URL         string            `json:"url"`
	Labels      map[string]string `json:"labels"`
	Author      string            `json:"author" doc:"who made the change (for agent actions: who approved it)"`
	OccurredAt  time.Time         `json:"occurred_at"`
	CreatedAt   time.Time         `json:"created_at"`
	ExternalID  string            `json:"external_id" doc:"the sender's identity of the change; a second change with the same one is a duplicate"`
}

// ChangeCreatedOut answers POST /api/changes.
type ChangeCreatedOut struct {
	ChangeOut
	Status string `json:"status" doc:"created, or duplicate when the same change was stored before (the stored one is returned)"`
}

// ChangeCreate is the documented generic change shape: POST it to
// /api/changes, or wrap it as {"change": {...}} in a delivery to a
// generic webhook.
type ChangeCreate struct {
	Title       string            `json:"title" validate:"required,min=1,max=500"`
	Kind        string            `json:"kind" validate:"max=40,pattern=^[a-z][a-z0-9_-]*$" doc:"default deploy"`
	Service     string            `json:"service" validate:"max=200"`
	Environment string            `json:"environment" validate:"max=200"`
	Description string            `json:"description" validate:"max=20000"`
	URL         string            `json:"url" validate:"max=2000"`
	Labels      map[string]string `json:"labels"`
	Author      string            `json:"author" validate:"max=200"`
	OccurredAt  *time.Time        `json:"occurred_at" doc:"default: when it was received"`
	ExternalID  string            `json:"external_id" validate:"max=300" doc:"the sender's id of the change (default: the X-Idempotency-Key header, else a hash of the content)"`
}

// changeFields names the generic shape's fields, for the 422 of a body
// that is not one.
var changeFields = []string{"title", "kind", "service", "environment", "description", "url", "labels", "author", "occurred_at", "external_id"}

// ChangePage is a page of changes, newest first.
type ChangePage struct {
	Items       []ChangeOut `json:"items"`
	Total       int         `json:"total" doc:"how many changes match, counted up to 1000 (see total_capped)"`
	TotalCapped bool        `json:"total_capped" doc:"more than total match: the count stops at 1000 so that a page of a large feed stays fast"`
	Limit       int         `json:"limit"`
	Offset      int         `json:"offset"`
}

// ChangeQuery filters GET /api/changes.
type ChangeQuery struct {
	Since   time.Time `query:"since" doc:"occurred at or after (RFC 3339)"`
	Until   time.Time `query:"until" doc:"occurred before (RFC 3339)"`
	Service string    `query:"service" validate:"max=200"`
	Label   string    `query:"label" validate:"max=400" doc:"k=v; repeat for several (all must match)"`
	Source  string    `query:"source" validate:"max=40"`
	Limit   int       `query:"limit" default:"50" validate:"gte=1,lte=200"`
	Offset  int       `query:"offset" default:"0" validate:"gte=0"`
}

func changeOut(c *store.Change) ChangeOut {
	labels := c.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	return ChangeOut{ID: c.ID, ProjectID: c.ProjectID, Source: c.Source, Kind: c.Kind, Title: c.Title, Service: c.Service,
		Environment: c.Environment, Description: c.Description, URL: c.URL, Labels: labels, Author: c.Author,
		OccurredAt: c.OccurredAt, CreatedAt: c.CreatedAt, ExternalID: c.ExternalID}
}

// changeRoutes: the project's change feed.
func (s *Server) changeRoutes() []*Route {
	tags := []string{"changes"}
	return []*Route{
		{Method: "GET", Path: "/api/changes", Summary: "List the project's changes (deploys, releases, config, approved agent actions), newest first",
			Tags: tags, Auth: AuthAny, Perm: PermSessionsRead, Project: true, Query: ChangeQuery{}, Resp: ChangePage{}, Status: 200, MCP: true, Handle: s.handleListChanges},
		{Method: "POST", Path: "/api/changes", Summary: "Record a change (the generic change shape; 200 with status duplicate when it was stored before)",
			Tags: tags, Auth: AuthAny, Perm: PermWebhooksWrite, Project: true, Body: ChangeCreate{}, Resp: ChangeCreatedOut{}, Status: 201, MaxBody: 64 << 10, Handle: s.handleCreateChange},
	}
}

// handleListChanges is GET /api/changes.
func (s *Server) handleListChanges(c *Ctx) error {
	var q ChangeQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	f := store.ChangeFilter{OrgID: c.OrgID(), ProjectID: c.ProjectID(), Service: q.Service, Source: q.Source, Limit: q.Limit, Offset: q.Offset}
	if !q.Since.IsZero() {
		f.Since = &q.Since
	}
	if !q.Until.IsZero() {
		f.Until = &q.Until
	}
	for _, l := range c.R.URL.Query()["label"] {
		k, v, ok := strings.Cut(l, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return invalid("label must be k=v", "value_error", "query", "label")
		}
		if f.Labels == nil {
			f.Labels = map[string]string{}
		}
		f.Labels[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	cs, total, err := s.db.ListChangesCounted(c.Context(), f)
	if err != nil {
		return err
	}
	page := ChangePage{Items: make([]ChangeOut, 0, len(cs)), Total: total.N, TotalCapped: total.Capped, Limit: q.Limit, Offset: q.Offset}
	for i := range cs {
		page.Items = append(page.Items, changeOut(&cs[i]))
	}
	return c.JSON(200, page)
}

// handleCreateChange is POST /api/changes.
func (s *Server) handleCreateChange(c *Ctx) error {
	if ok, retry := s.inv().changePosts.Allow(c.ProjectID()); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	raw, err := readBody(c.R, c.Route.MaxBody)
	if err != nil {
		return err
	}
	req, err := decodeChange(raw, "body")
	if err != nil {
		return err
	}
	if req.ExternalID == "" {
		req.ExternalID = strings.TrimSpace(c.R.Header.Get("X-Idempotency-Key"))
	}
	ch, err := s.db.InsertChange(c.Context(), changeFromCreate(c.OrgID(), c.ProjectID(), store.ChangeSourceAPI, req))
	if err != nil {
		return err
	}
	out := ChangeCreatedOut{ChangeOut: changeOut(ch), Status: "created"}
	if ch.Duplicate {
		out.Status = "duplicate"
		return c.JSON(200, out)
	}
	c.Audit("change.created", "success", "change", ch.ID, map[string]any{"kind": ch.Kind, "service": ch.Service})
	return c.JSON(201, out)
}

// decodeChange reads the generic change shape. A body of another shape
// (no title, or fields the shape does not have) is a 422 that names the
// fields expected, so a sender configured for some other tool learns what
// to send.
func decodeChange(raw []byte, loc ...any) (*ChangeCreate, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, invalid("Input should be a change object with the fields "+strings.Join(changeFields, ", "), "json_invalid", loc...)
	}
	var unknown []string
	for k := range obj {
		if !containsStr(changeFields, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, invalid("unknown change shape: fields "+strings.Join(unknown, ", ")+" are not part of it; expected "+
			strings.Join(changeFields, ", ")+" (title required)", "value_error.change_shape", loc...)
	}
	var req ChangeCreate
	if err := decodeJSON(raw, &req); err != nil {
		return nil, err
	}
	for k, v := range req.Labels {
		if k == "" || len(k) > 100 || len(v) > 400 || strings.ContainsAny(k, "|=") || strings.Contains(v, "|") {
			return nil, invalid("labels: keys of 1-100 characters without | or =, values of at most 400 without |", "value_error", append(loc, "labels", k)...)
		}
	}
	return &req, nil
}

func containsStr(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func changeFromCreate(orgID, projectID, source string, r *ChangeCreate) store.Change {
	ch := store.Change{OrgID: orgID, ProjectID: projectID, Source: source, Kind: r.Kind, Title: strings.TrimSpace(r.Title),
		Service: r.Service, Environment: r.Environment, Description: r.Description, URL: r.URL, Labels: r.Labels,
		Author: r.Author, ExternalID: r.ExternalID}
	if ch.Kind == "" {
		ch.Kind = "deploy"
	}
	if r.OccurredAt != nil {
		ch.OccurredAt = r.OccurredAt.UTC()
	}
	return ch
}

// recordWebhookChange adds the change a live webhook delivery reports to
// the feed (a GitHub deployment, a GitLab pipeline on the default branch,
// a generic delivery in the change shape). It runs after the delivery was
// accepted, so the webhook's rate limit and dedupe have applied; a
// duplicate delivery records nothing. It never fails the delivery.
func (s *Server) recordWebhookChange(ctx context.Context, orgID, projectID, provider string, h map[string][]string, body []byte) {
	var ch store.Change
	switch provider {
	case string(webhook.ProviderGitHub), string(webhook.ProviderGitLab):
		wc, ok := webhook.ChangeFrom(webhook.Provider(provider), h, body)
		if !ok {
			return
		}
		ch = store.Change{Source: provider, Kind: wc.Kind, Title: wc.Title, Service: wc.Service, Environment: wc.Environment,
			Description: truncateText(wc.Description, 20000), URL: wc.URL, Labels: wc.Labels, Author: wc.Author,
			ExternalID: wc.ExternalID, OccurredAt: wc.OccurredAt}
	case string(webhook.ProviderGeneric):
		var env struct {
			Change json.RawMessage `json:"change"`
		}
		if json.Unmarshal(body, &env) != nil || len(env.Change) == 0 {
			return
		}
		req, err := decodeChange(env.Change, "body", "change")
		if err != nil {
			s.log.Info("generic webhook: change not recorded", "project_id", projectID, "err", err)
			return
		}
		ch = changeFromCreate(orgID, projectID, store.ChangeSourceGeneric, req)
	default:
		return
	}
	ch.OrgID, ch.ProjectID = orgID, projectID
	if _, err := s.db.InsertChange(ctx, ch); err != nil {
		s.log.Warn("change feed: webhook change not recorded", "project_id", projectID, "err", err)
	}
}

// recordApprovedAction adds an approved agent action that is about to run
// to the feed: the command, the host and who approved it.
func (s *Server) recordApprovedAction(ctx context.Context, orgID, projectID, approvalID string) {
	a, err := s.db.FindApproval(ctx, orgID, projectID, approvalID)
	if err != nil {
		s.log.Warn("change feed: approval not read", "approval_id", approvalID, "err", err)
		return
	}
	var subj ToolCallSubject
	_ = json.Unmarshal([]byte(a.Subject), &subj)
	approver := a.DecidedBy
	if u, err := s.db.FindUserByID(ctx, a.DecidedBy); err == nil && u.Email != "" {
		approver = u.Email
	}
	title := subj.Tool
	if subj.Target != "" {
		title += " on " + subj.Target
	}
	if subj.Command != "" {
		title += ": " + truncateText(oneLineText(subj.Command), 300)
	}
	labels := map[string]string{"approval_id": a.ID, "tool": subj.Tool}
	if subj.Target != "" {
		labels["host"] = subj.Target
	}
	if a.SessionID != "" {
		labels["session_id"] = a.SessionID
	}
	ch := store.Change{OrgID: orgID, ProjectID: projectID, Source: store.ChangeSourceAgent, Kind: "action", Title: title,
		Service: subj.Target, Description: subj.Command, Labels: labels, Author: approver, ExternalID: "approval:" + a.ID}
	if _, err := s.db.InsertChange(ctx, ch); err != nil {
		s.log.Warn("change feed: approved action not recorded", "approval_id", approvalID, "err", err)
	}
}

// SweepChanges deletes changes past store.ChangeRetention (run by the
// webhook-retention job beside the events).
func (s *Server) SweepChanges(ctx context.Context) error {
	n, err := s.db.SweepChanges(ctx, s.Now(), 1000)
	if n > 0 {
		s.log.Info("changes past retention deleted", "count", n)
	}
	return err
}

// changeCandidate is the receiver's cheap first look: only GitHub and
// GitLab deliveries and generic ones that mention a change are decoded
// again, so alert traffic pays nothing for the feed.
func changeCandidate(provider string, body []byte) bool {
	switch provider {
	case string(webhook.ProviderGitHub), string(webhook.ProviderGitLab):
		return true
	case string(webhook.ProviderGeneric):
		return bytes.Contains(body, []byte(`"change"`))
	}
	return false
}
