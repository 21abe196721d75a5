package server

import (
	"context"
	"sync"
	"time"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/server/webhook"
	"github.com/opsagent/opsagent/server/windows"
	"github.com/opsagent/opsagent/store"
)

// Maintenance windows: while one is active, the project's matching alerts
// are stored but not dispatched (suppress) or dispatched to a run that may
// only read (observe). The webhook dispatcher asks activeWindow for every
// event; the event's dispatch record names the window.

// WindowOut is a maintenance window.
type WindowOut struct {
	ID              string            `json:"id"`
	ProjectID       string            `json:"project_id"`
	Name            string            `json:"name"`
	StartsAt        *time.Time        `json:"starts_at" doc:"one-off window start"`
	EndsAt          *time.Time        `json:"ends_at" doc:"one-off window end (exclusive)"`
	Schedule        string            `json:"schedule" doc:"recurring window: 5-field cron of each start"`
	Timezone        string            `json:"timezone"`
	DurationSeconds int64             `json:"duration_seconds" doc:"recurring window: how long each occurrence lasts"`
	MatchSources    []string          `json:"match_sources" doc:"webhook providers it covers; empty: all"`
	MatchLabels     map[string]string `json:"match_labels" doc:"label -> glob; every alert of an event must match all of them; empty: all"`
	Mode            string            `json:"mode" doc:"suppress (stored, not dispatched) or observe (dispatched to a run that may only read)"`
	Enabled         bool              `json:"enabled"`
	Active          bool              `json:"active" doc:"covers the present moment"`
	ActiveUntil     *time.Time        `json:"active_until"`
	NextStart       *time.Time        `json:"next_start"`
	CreatedAt       time.Time         `json:"created_at"`
	UpdatedAt       time.Time         `json:"updated_at"`
}

// WindowListOut lists windows.
type WindowListOut struct {
	Items []WindowOut `json:"items"`
	Total int         `json:"total"`
}

// WindowIn creates or replaces a window: one-off (starts_at, ends_at) or
// recurring (schedule, timezone, duration_seconds).
type WindowIn struct {
	Name            string            `json:"name" validate:"required,min=1,max=200"`
	StartsAt        *time.Time        `json:"starts_at"`
	EndsAt          *time.Time        `json:"ends_at"`
	Schedule        string            `json:"schedule" validate:"max=200"`
	Timezone        string            `json:"timezone" validate:"max=64"`
	DurationSeconds int64             `json:"duration_seconds" validate:"gte=0"`
	MatchSources    []string          `json:"match_sources"`
	MatchLabels     map[string]string `json:"match_labels"`
	Mode            string            `json:"mode" validate:"oneof=suppress observe"`
	Enabled         *bool             `json:"enabled"`
}

func (s *Server) windowRoutes() []*Route {
	tags := []string{"maintenance windows"}
	return []*Route{
		{Method: "GET", Path: "/api/maintenance-windows", Summary: "List the project's maintenance windows (active now, next start)", Tags: tags, Auth: AuthAny, Perm: PermWebhooksRead, Project: true, Resp: WindowListOut{}, Status: 200, MCP: true, Handle: s.handleListWindows},
		{Method: "POST", Path: "/api/maintenance-windows", Summary: "Create a maintenance window", Tags: tags, Auth: AuthAny, Perm: PermWebhooksWrite, Project: true, Body: WindowIn{}, Resp: WindowOut{}, Status: 201, MaxBody: 16 << 10, Handle: s.handleCreateWindow},
		{Method: "GET", Path: "/api/maintenance-windows/{window_id}", Summary: "Read a maintenance window", Tags: tags, Auth: AuthAny, Perm: PermWebhooksRead, Project: true, Resp: WindowOut{}, Status: 200, Handle: s.handleGetWindow},
		{Method: "PUT", Path: "/api/maintenance-windows/{window_id}", Summary: "Replace a maintenance window", Tags: tags, Auth: AuthAny, Perm: PermWebhooksWrite, Project: true, Body: WindowIn{}, Resp: WindowOut{}, Status: 200, MaxBody: 16 << 10, Handle: s.handlePutWindow},
		{Method: "DELETE", Path: "/api/maintenance-windows/{window_id}", Summary: "Delete a maintenance window", Tags: tags, Auth: AuthAny, Perm: PermWebhooksWrite, Project: true, Status: 204, Handle: s.handleDeleteWindow},
	}
}

func (s *Server) windowOut(w *store.MaintenanceWindow) WindowOut {
	now := s.Now()
	o := WindowOut{ID: w.ID, ProjectID: w.ProjectID, Name: w.Name, StartsAt: w.StartsAt, EndsAt: w.EndsAt, Schedule: w.Schedule,
		Timezone: w.Timezone, DurationSeconds: int64(w.Duration / time.Second), MatchSources: w.MatchSources, MatchLabels: w.MatchLabels,
		Mode: w.Mode, Enabled: w.Enabled, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}
	if ok, end := windows.Active(w, now); ok {
		o.Active, o.ActiveUntil = true, &end
	}
	if n := windows.Next(w, now); !n.IsZero() && w.Enabled {
		o.NextStart = &n
	}
	return o
}

// fill copies the request onto w and validates it (422 at the field at fault).
func (req *WindowIn) fill(w *store.MaintenanceWindow) error {
	w.Name, w.StartsAt, w.EndsAt, w.Schedule, w.Timezone = req.Name, req.StartsAt, req.EndsAt, req.Schedule, req.Timezone
	w.Duration, w.MatchSources, w.MatchLabels, w.Mode = time.Duration(req.DurationSeconds)*time.Second, req.MatchSources, req.MatchLabels, req.Mode
	if w.Mode == "" {
		w.Mode = store.WindowSuppress
	}
	if w.Schedule != "" && w.Timezone == "" {
		w.Timezone = "UTC"
	}
	if w.MatchSources == nil {
		w.MatchSources = []string{}
	}
	if w.MatchLabels == nil {
		w.MatchLabels = map[string]string{}
	}
	w.Enabled = req.Enabled == nil || *req.Enabled
	for _, t := range []*time.Time{w.StartsAt, w.EndsAt} {
		if t != nil {
			*t = t.UTC()
		}
	}
	if field, err := windows.Validate(w); err != nil {
		return invalid(err.Error(), "value_error", "body", field)
	}
	return nil
}

// handleListWindows is GET /api/maintenance-windows.
func (s *Server) handleListWindows(c *Ctx) error {
	ws, err := s.db.FindWindows(c.Context(), c.OrgID(), c.ProjectID())
	if err != nil {
		return err
	}
	out := WindowListOut{Items: make([]WindowOut, 0, len(ws)), Total: len(ws)}
	for i := range ws {
		out.Items = append(out.Items, s.windowOut(&ws[i]))
	}
	return c.JSON(200, out)
}

// handleCreateWindow is POST /api/maintenance-windows.
func (s *Server) handleCreateWindow(c *Ctx) error {
	var req WindowIn
	if err := c.Bind(&req); err != nil {
		return err
	}
	w := &store.MaintenanceWindow{OrgID: c.OrgID(), ProjectID: c.ProjectID(), CreatedBy: c.ID.UserID}
	if err := req.fill(w); err != nil {
		return err
	}
	if err := s.db.CreateWindow(c.Context(), w); err != nil {
		return err
	}
	s.bx().windows.forget(w.ProjectID)
	c.Audit("maintenance_window.created", "success", "maintenance_window", w.ID, map[string]any{"name": w.Name, "mode": w.Mode, "schedule": w.Schedule})
	return c.JSON(201, s.windowOut(w))
}

// handleGetWindow is GET /api/maintenance-windows/{window_id}.
func (s *Server) handleGetWindow(c *Ctx) error {
	id, err := c.IDParam("window_id")
	if err != nil {
		return err
	}
	w, err := s.db.FindWindow(c.Context(), c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	return c.JSON(200, s.windowOut(w))
}

// handlePutWindow is PUT /api/maintenance-windows/{window_id}.
func (s *Server) handlePutWindow(c *Ctx) error {
	id, err := c.IDParam("window_id")
	if err != nil {
		return err
	}
	var req WindowIn
	if err := c.Bind(&req); err != nil {
		return err
	}
	w, err := s.db.UpdateWindow(c.Context(), c.OrgID(), c.ProjectID(), id, req.fill)
	if err != nil {
		return err
	}
	s.bx().windows.forget(w.ProjectID)
	c.Audit("maintenance_window.updated", "success", "maintenance_window", w.ID, map[string]any{"name": w.Name, "mode": w.Mode, "enabled": w.Enabled})
	return c.JSON(200, s.windowOut(w))
}

// handleDeleteWindow is DELETE /api/maintenance-windows/{window_id}.
func (s *Server) handleDeleteWindow(c *Ctx) error {
	id, err := c.IDParam("window_id")
	if err != nil {
		return err
	}
	if err := s.db.DeleteWindow(c.Context(), c.OrgID(), c.ProjectID(), id); err != nil {
		return err
	}
	s.bx().windows.forget(c.ProjectID())
	c.Audit("maintenance_window.deleted", "success", "maintenance_window", id, nil)
	return c.NoContent()
}

// windowCache keeps each project's windows for windowCacheTTL: the
// dispatcher asks for every event, and the windows of an alert storm's
// project are the same for all of them. Writes here forget the project at
// once; a write by another process is seen within the TTL.
type windowCache struct {
	mu sync.Mutex
	m  map[string]windowEntry
}

type windowEntry struct {
	loaded time.Time
	ws     []store.MaintenanceWindow
}

const windowCacheTTL = 5 * time.Second

func (wc *windowCache) forget(projectID string) {
	wc.mu.Lock()
	delete(wc.m, projectID)
	wc.mu.Unlock()
}

// activeWindow is the pipeline's Windows hook. A database error dispatches
// the event (fail open): missing a page is worse than an unwanted one.
func (s *Server) activeWindow(orgID, projectID, provider string, at time.Time, alerts []webhook.Alert) *store.WindowMatch {
	wc := &s.bx().windows
	now := time.Now()
	wc.mu.Lock()
	e, ok := wc.m[projectID]
	wc.mu.Unlock()
	if !ok || now.Sub(e.loaded) > windowCacheTTL {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ws, err := s.db.FindWindows(ctx, orgID, projectID)
		cancel()
		if err != nil {
			s.log.Error("maintenance windows unreadable; event dispatched", "project_id", projectID, "err", err)
			return nil
		}
		e = windowEntry{loaded: now, ws: ws}
		wc.mu.Lock()
		wc.m[projectID] = e
		wc.mu.Unlock()
	}
	if len(e.ws) == 0 {
		return nil
	}
	return windows.Find(e.ws, at, provider, alerts)
}

// observeOnly refuses a change-capable call of a run started inside an
// observe-mode maintenance window; reads (and shell lines the analysis
// proves read-only) still run. Runs without a session (rule evaluation,
// what-if) are never observe-only.
func (s *Server) observeOnly(ctx context.Context, run runner.RunInfo, view callView, readOnly bool) (callDecision, bool) {
	if run.SessionID == "" || readOnly || (view.Scan != nil && view.Scan.readOnly) {
		return callDecision{}, false
	}
	id, err := s.db.ObserveOnlyWindow(ctx, run.SessionID)
	if err != nil {
		return callDecision{verdict: agent.Block("the platform could not tell whether this run may change things; it did not run"), view: view}, true
	}
	if id == "" {
		return callDecision{}, false
	}
	return callDecision{verdict: agent.Block("this run was started inside maintenance window " + id +
		" in observe mode: it may read and report, not change anything. Describe the change you would make instead."), view: view}, true
}
