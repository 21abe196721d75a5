package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/store"
)

// IncidentArchiver files a resolved incident's summary into the project's
// "incidents" knowledge collection so the agent learns from it.
type IncidentArchiver interface {
	Archive(ctx context.Context, orgID, projectID, name string, markdown []byte) error
}

// ragArchiver is the IncidentArchiver of a server: the document is written
// and indexed by the rag store before Archive returns, so the incident is
// found by /api/knowledge/search (and by the agent) at once.
type ragArchiver struct{ kb *rag.Store }

func (a ragArchiver) Archive(ctx context.Context, orgID, projectID, name string, markdown []byte) error {
	_, err := a.kb.Put(ctx, rag.Scope{OrgID: orgID, ProjectID: projectID}, rag.CollectionIncidents, name, markdown, []string{"incident"})
	return err
}

// IncidentOut is an incident.
type IncidentOut struct {
	ID             string     `json:"id"`
	ProjectID      string     `json:"project_id"`
	TaskID         *string    `json:"task_id" doc:"the webhook whose alerts opened it"`
	Provider       string     `json:"provider"`
	Title          string     `json:"title"`
	Severity       string     `json:"severity"`
	Status         string     `json:"status" doc:"triggered, acknowledged, resolved (PagerDuty's names)"`
	AlertCount     int        `json:"alert_count" doc:"distinct alerts (by fingerprint; an alert without one counts each time it arrives)"`
	EventCount     int        `json:"event_count" doc:"webhook deliveries that joined the incident (re-sends included)"`
	SessionID      *string    `json:"session_id" doc:"the investigation (agent run) it started"`
	OpenedAt       time.Time  `json:"opened_at"`
	LastAlertAt    time.Time  `json:"last_alert_at"`
	AcknowledgedAt *time.Time `json:"acknowledged_at"`
	AcknowledgedBy *string    `json:"acknowledged_by"`
	ResolvedAt     *time.Time `json:"resolved_at"`
	ResolvedBy     *string    `json:"resolved_by"`
	Summary        string     `json:"summary"`
}

// TimelineEntryOut is one line of an incident's timeline.
type TimelineEntryOut struct {
	ID    string          `json:"id"`
	At    time.Time       `json:"at"`
	Kind  string          `json:"kind" doc:"alert, session, approval, note, status, change (the project's changes from an hour before it opened), finding"`
	Actor *string         `json:"actor" doc:"user id; null for the system and providers"`
	Text  string          `json:"text"`
	Data  json.RawMessage `json:"data"`
}

// IncidentDetailOut is an incident with its timeline.
type IncidentDetailOut struct {
	IncidentOut
	Timeline []TimelineEntryOut `json:"timeline"`
	// LatestFinding is the newest investigation's finding (absent before any).
	LatestFinding *FindingOut `json:"latest_finding,omitempty"`
}

// IncidentPage is a page of incidents.
type IncidentPage struct {
	Items  []IncidentOut `json:"items"`
	Total  int           `json:"total"`
	Limit  int           `json:"limit"`
	Offset int           `json:"offset"`
}

// IncidentQuery filters GET /api/incidents.
type IncidentQuery struct {
	Status string `query:"status" validate:"oneof=triggered acknowledged resolved"`
	Limit  int    `query:"limit" default:"25" validate:"gte=1,lte=200"`
	Offset int    `query:"offset" default:"0" validate:"gte=0"`
}

// IncidentResolve is the body of resolve.
type IncidentResolve struct {
	Summary string `json:"summary" validate:"max=20000" doc:"what happened and what fixed it; filed in the incidents knowledge collection"`
}

// IncidentNote is the body of a note.
type IncidentNote struct {
	Text string `json:"text" validate:"required,min=1,max=20000"`
}

func incidentOut(i *store.Incident) IncidentOut {
	return IncidentOut{ID: i.ID, ProjectID: i.ProjectID, TaskID: optStr(i.TaskID), Provider: i.Provider, Title: i.Title,
		Severity: i.Severity, Status: i.Status, AlertCount: i.AlertCount, EventCount: i.EventCount, SessionID: optStr(i.SessionID),
		OpenedAt: i.OpenedAt, LastAlertAt: i.LastAlertAt, AcknowledgedAt: i.AcknowledgedAt, AcknowledgedBy: optStr(i.AcknowledgedBy),
		ResolvedAt: i.ResolvedAt, ResolvedBy: optStr(i.ResolvedBy), Summary: i.Summary}
}

// incidentRoutes: list, read, acknowledge, resolve and annotate incidents.
func (s *Server) incidentRoutes() []*Route {
	tags := []string{"incidents"}
	return []*Route{
		{Method: "GET", Path: "/api/incidents", Summary: "List incidents, open ones first", Tags: tags, Auth: AuthAny, Perm: PermSessionsRead, Project: true, Query: IncidentQuery{}, Resp: IncidentPage{}, Status: 200, MCP: true, Handle: s.handleListIncidents},
		{Method: "GET", Path: "/api/incidents/{incident_id}", Summary: "Read an incident with its timeline of alerts, sessions and notes", Tags: tags, Auth: AuthAny, Perm: PermSessionsRead, Project: true, Resp: IncidentDetailOut{}, Status: 200, MCP: true, Handle: s.handleGetIncident},
		{Method: "POST", Path: "/api/incidents/{incident_id}/acknowledge", Summary: "Acknowledge (409 when already acknowledged or resolved)", Tags: tags, Auth: AuthAny, Perm: PermSessionsWrite, Project: true, Resp: IncidentOut{}, Status: 200, MCP: true, Handle: s.handleAckIncident},
		{Method: "POST", Path: "/api/incidents/{incident_id}/resolve", Summary: "Resolve; the summary goes to the project's incidents knowledge collection", Tags: tags, Auth: AuthAny, Perm: PermSessionsWrite, Project: true, Body: IncidentResolve{}, Resp: IncidentOut{}, Status: 200, MaxBody: 64 << 10, MCP: true, Handle: s.handleResolveIncident},
		{Method: "POST", Path: "/api/incidents/{incident_id}/notes", Summary: "Add a note to the timeline", Tags: tags, Auth: AuthAny, Perm: PermSessionsWrite, Project: true, Body: IncidentNote{}, Resp: TimelineEntryOut{}, Status: 201, MaxBody: 64 << 10, MCP: true, Handle: s.handleAnnotateIncident},
	}
}

// handleListIncidents is GET /api/incidents.
func (s *Server) handleListIncidents(c *Ctx) error {
	var q IncidentQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	is, total, err := s.db.FindIncidents(c.Context(), store.IncidentFilter{OrgID: c.OrgID(), ProjectID: c.ProjectID(), Status: q.Status, Limit: q.Limit, Offset: q.Offset})
	if err != nil {
		return err
	}
	page := IncidentPage{Items: make([]IncidentOut, 0, len(is)), Total: total, Limit: q.Limit, Offset: q.Offset}
	for i := range is {
		page.Items = append(page.Items, incidentOut(&is[i]))
	}
	return c.JSON(200, page)
}

// handleGetIncident is GET /api/incidents/{incident_id}.
func (s *Server) handleGetIncident(c *Ctx) error {
	id, err := c.IDParam("incident_id")
	if err != nil {
		return err
	}
	inc, tl, err := s.db.FindIncident(c.Context(), c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	out := IncidentDetailOut{IncidentOut: incidentOut(inc), Timeline: make([]TimelineEntryOut, 0, len(tl))}
	for _, e := range tl {
		out.Timeline = append(out.Timeline, TimelineEntryOut{ID: e.ID, At: e.At, Kind: e.Kind, Actor: optStr(e.Actor), Text: e.Text, Data: json.RawMessage(orEmpty(e.Data, "{}"))})
	}
	if err := s.decorateIncident(c.Context(), inc, &out); err != nil { // incident_changes.go
		return err
	}
	return c.JSON(200, out)
}

// handleAckIncident is POST /api/incidents/{incident_id}/acknowledge.
func (s *Server) handleAckIncident(c *Ctx) error {
	id, err := c.IDParam("incident_id")
	if err != nil {
		return err
	}
	inc, err := s.db.TransitionIncident(c.Context(), c.OrgID(), c.ProjectID(), id, store.IncidentAcknowledged, c.ID.UserID, "")
	if err != nil {
		return err
	}
	c.Audit("incident.acknowledged", "success", "incident", id, nil)
	return c.JSON(200, incidentOut(inc))
}

// handleResolveIncident is POST /api/incidents/{incident_id}/resolve.
func (s *Server) handleResolveIncident(c *Ctx) error {
	id, err := c.IDParam("incident_id")
	if err != nil {
		return err
	}
	var req IncidentResolve
	if err := c.Bind(&req); err != nil {
		return err
	}
	inc, err := s.db.TransitionIncident(c.Context(), c.OrgID(), c.ProjectID(), id, store.IncidentResolved, c.ID.UserID, strings.TrimSpace(req.Summary))
	if err != nil {
		return err
	}
	s.archiveIncident(c.Context(), inc)
	c.Audit("incident.resolved", "success", "incident", id, nil)
	return c.JSON(200, incidentOut(inc))
}

// handleAnnotateIncident is POST /api/incidents/{incident_id}/notes.
func (s *Server) handleAnnotateIncident(c *Ctx) error {
	id, err := c.IDParam("incident_id")
	if err != nil {
		return err
	}
	var req IncidentNote
	if err := c.Bind(&req); err != nil {
		return err
	}
	e, err := s.db.AnnotateIncident(c.Context(), c.OrgID(), c.ProjectID(), id, c.ID.UserID, req.Text)
	if err != nil {
		return err
	}
	return c.JSON(201, TimelineEntryOut{ID: e.ID, At: e.At, Kind: e.Kind, Actor: optStr(e.Actor), Text: e.Text, Data: json.RawMessage("{}")})
}

// archiveIncident files the resolved incident's summary with its timeline.
// It never fails the caller: the incident is resolved either way.
func (s *Server) archiveIncident(ctx context.Context, inc *store.Incident) {
	s.draftPostmortemLater(inc) // postmortems.go
	if s.incidentArchiver == nil {
		return
	}
	full, tl, err := s.db.FindIncident(ctx, inc.OrgID, inc.ProjectID, inc.ID)
	if err != nil {
		s.log.Error("incident archive: read", "incident_id", inc.ID, "err", err)
		return
	}
	if err := s.incidentArchiver.Archive(ctx, inc.OrgID, inc.ProjectID, inc.ID+".md", incidentMarkdown(full, tl)); err != nil {
		s.log.Error("incident archive", "incident_id", inc.ID, "err", err)
	}
}

// incidentMarkdown is the document the knowledge collection receives.
func incidentMarkdown(i *store.Incident, tl []store.TimelineEntry) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# Incident: %s\n\n", i.Title)
	fmt.Fprintf(&b, "- id: %s\n- provider: %s\n- severity: %s\n- opened: %s\n", i.ID, i.Provider, i.Severity, i.OpenedAt.Format(time.RFC3339))
	if i.ResolvedAt != nil {
		fmt.Fprintf(&b, "- resolved: %s (after %s)\n", i.ResolvedAt.Format(time.RFC3339), i.ResolvedAt.Sub(i.OpenedAt).Round(time.Second))
	}
	fmt.Fprintf(&b, "- alerts: %d distinct in %d deliveries\n", i.AlertCount, i.EventCount)
	if i.SessionID != "" {
		fmt.Fprintf(&b, "- investigation session: %s\n", i.SessionID)
	}
	b.WriteString("\n## Summary\n\n")
	if i.Summary != "" {
		b.WriteString(i.Summary + "\n")
	} else {
		b.WriteString("(no summary given)\n")
	}
	b.WriteString("\n## Timeline\n\n")
	for _, e := range tl {
		fmt.Fprintf(&b, "- %s %s: %s\n", e.At.Format(time.RFC3339), e.Kind, strings.ReplaceAll(e.Text, "\n", " "))
	}
	return []byte(b.String())
}
