package server

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/opsagent/opsagent/store"
)

// ProjectOut is a project. Visibility: org owners and admins see every
// project; members and viewers see open projects (restricted = false) plus
// restricted ones that list them as project members. An API key sees what its
// creator sees, narrowed by its project allow-list.
type ProjectOut struct {
	ID          string     `json:"id"`
	OrgID       string     `json:"org_id"`
	Name        string     `json:"name"`
	Slug        string     `json:"slug"`
	Description string     `json:"description"`
	Restricted  bool       `json:"restricted"`
	Archived    bool       `json:"archived"`
	ArchivedAt  *time.Time `json:"archived_at"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
}

// ProjectCreate makes a project in the current org.
type ProjectCreate struct {
	Name        string `json:"name" validate:"required,min=1,max=120"`
	Slug        string `json:"slug,omitempty" validate:"max=48,pattern=^([a-z0-9][a-z0-9-]*)?$"`
	Description string `json:"description,omitempty" validate:"max=2000"`
	Restricted  bool   `json:"restricted,omitempty"`
}

// ProjectUpdate changes a project. archived and restricted need projects:admin.
type ProjectUpdate struct {
	Name         *string         `json:"name,omitempty" validate:"nonnull,min=1,max=120"`
	Description  *string         `json:"description,omitempty" validate:"nonnull,max=2000"`
	Archived     *bool           `json:"archived,omitempty" validate:"nonnull"`
	Restricted   *bool           `json:"restricted,omitempty" validate:"nonnull"`
	FeatureFlags map[string]bool `json:"feature_flags,omitempty"`
}

// ProjectFeatureFlagsOut is the project's effective feature switches:
// defaults overridden by what ProjectUpdate.feature_flags stored.
type ProjectFeatureFlagsOut struct {
	ProjectID string          `json:"project_id"`
	Flags     map[string]bool `json:"flags"`
}

// ProjectListQuery filters the project list.
type ProjectListQuery struct {
	IncludeArchived bool `query:"include_archived" default:"false"`
}

// defaultFeatureFlags are the switches a project starts with.
var defaultFeatureFlags = map[string]bool{"agent_chat": true, "tasks": true, "webhooks": true, "mcp": true, "knowledge": true, "approvals": true}

func projectOut(p *store.Project) ProjectOut {
	return ProjectOut{ID: p.ID, OrgID: p.OrgID, Name: p.Name, Slug: p.Slug, Description: p.Description, Restricted: p.Restricted,
		Archived: p.ArchivedAt != nil, ArchivedAt: p.ArchivedAt, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

func (s *Server) projectRoutes() []*Route {
	tags := []string{"projects"}
	return []*Route{
		{Method: "GET", Path: "/api/projects", Summary: "Projects of the current organization I can see", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Query: ProjectListQuery{}, Resp: []ProjectOut{}, Status: 200, MCP: true, Handle: s.handleListProjects},
		{Method: "POST", Path: "/api/projects", Summary: "Create a project", Tags: tags, Auth: AuthAny, Perm: PermProjectAdmin, Body: ProjectCreate{}, Resp: ProjectOut{}, Status: 201, MaxBody: 16 << 10, Handle: s.handleCreateProject},
		{Method: "GET", Path: "/api/projects/current", Summary: "The project named by X-Project-ID (lets a client check a project header)", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Project: true, Resp: ProjectOut{}, Status: 200, MCP: true, Handle: s.handleCurrentProject},
		{Method: "GET", Path: "/api/projects/{project_id}", Summary: "One project", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Resp: ProjectOut{}, Status: 200, MCP: true, Handle: s.handleGetProject},
		{Method: "PATCH", Path: "/api/projects/{project_id}", Summary: "Update a project (archive and restrict need projects:admin)", Tags: tags, Auth: AuthAny, Perm: PermProjectWrite, Body: ProjectUpdate{}, Resp: ProjectOut{}, Status: 200, MaxBody: 16 << 10, Handle: s.handleUpdateProject},
		{Method: "DELETE", Path: "/api/projects/{project_id}", Summary: "Delete a project and everything in it", Tags: tags, Auth: AuthAny, Perm: PermProjectAdmin, Status: 204, Handle: s.handleDeleteProject},
		{Method: "GET", Path: "/api/projects/{project_id}/feature-flags", Summary: "The project's feature flags", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Resp: ProjectFeatureFlagsOut{}, Status: 200, Handle: s.handleFeatureFlags},
	}
}

// handleListProjects is GET /api/projects.
func (s *Server) handleListProjects(c *Ctx) error {
	var q ProjectListQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	ps, err := s.db.FindProjects(c.Context(), viewer(c.ID), q.IncludeArchived)
	if err != nil {
		return err
	}
	out := make([]ProjectOut, len(ps))
	for i, p := range ps {
		out[i] = projectOut(p)
	}
	return c.JSON(200, out)
}

// handleCreateProject is POST /api/projects.
func (s *Server) handleCreateProject(c *Ctx) error {
	var req ProjectCreate
	if err := c.Bind(&req); err != nil {
		return err
	}
	if err := trimNonBlank(&req.Name, "name"); err != nil {
		return err
	}
	p := &store.Project{OrgID: c.OrgID(), Name: req.Name, Slug: req.Slug, Description: req.Description, Restricted: req.Restricted}
	if err := s.db.CreateProject(c.Context(), p); err != nil {
		return err
	}
	c.Audit("project.created", "success", "project", p.ID, map[string]any{"name": p.Name})
	return c.JSON(http.StatusCreated, projectOut(p))
}

// handleCurrentProject is GET /api/projects/current: X-Project-ID was
// resolved (visibility, allow-list, project role) before the handler.
func (s *Server) handleCurrentProject(c *Ctx) error { return c.JSON(200, projectOut(c.Project)) }

// handleGetProject is GET /api/projects/{project_id}.
func (s *Server) handleGetProject(c *Ctx) error {
	p, err := s.projectFor(c, c.Param("project_id"))
	if err != nil {
		return err
	}
	return c.JSON(200, projectOut(p))
}

// handleUpdateProject is PATCH /api/projects/{project_id}.
func (s *Server) handleUpdateProject(c *Ctx) error {
	p, err := s.projectFor(c, c.Param("project_id"))
	if err != nil {
		return err
	}
	var req ProjectUpdate
	if err := c.Bind(&req); err != nil {
		return err
	}
	if (req.Archived != nil || req.Restricted != nil) && !c.ID.Can(PermProjectAdmin) {
		s.onPermissionDenied(c)
		return &store.Error{Code: store.EForbidden, Message: "archiving or restricting a project needs projects:admin", Reason: "permission_denied"}
	}
	for k := range req.FeatureFlags {
		if _, ok := defaultFeatureFlags[k]; !ok {
			return invalid("Unknown feature flag; known: "+strings.Join(flagNames(), ", "), "enum", "body", "feature_flags", k)
		}
	}
	if req.Name != nil {
		n := strings.TrimSpace(*req.Name)
		if n == "" {
			return invalid("String should have at least 1 character", "string_too_short", "body", "name")
		}
		req.Name = &n
	}
	up, err := s.db.UpdateProject(c.Context(), c.OrgID(), p.ID, store.ProjectPatch{Name: req.Name, Description: req.Description,
		Archived: req.Archived, Restricted: req.Restricted, FeatureFlags: req.FeatureFlags})
	if err != nil {
		return err
	}
	action := "project.updated"
	if req.Archived != nil && (p.ArchivedAt != nil) != *req.Archived {
		action = map[bool]string{true: "project.archived", false: "project.unarchived"}[*req.Archived]
	}
	c.Audit(action, "success", "project", p.ID, nil)
	return c.JSON(200, projectOut(up))
}

// handleDeleteProject is DELETE /api/projects/{project_id}.
func (s *Server) handleDeleteProject(c *Ctx) error {
	p, err := s.projectFor(c, c.Param("project_id"))
	if err != nil {
		return err
	}
	if err := s.db.DeleteProject(c.Context(), c.OrgID(), p.ID); err != nil {
		return err
	}
	c.Audit("project.deleted", "success", "project", p.ID, map[string]any{"name": p.Name})
	return c.NoContent()
}

// handleFeatureFlags is GET /api/projects/{project_id}/feature-flags.
func (s *Server) handleFeatureFlags(c *Ctx) error {
	p, err := s.projectFor(c, c.Param("project_id"))
	if err != nil {
		return err
	}
	return c.JSON(200, ProjectFeatureFlagsOut{ProjectID: p.ID, Flags: featureFlags(p)})
}

func featureFlags(p *store.Project) map[string]bool {
	flags := map[string]bool{}
	for k, v := range defaultFeatureFlags {
		flags[k] = v
	}
	var settings struct {
		FeatureFlags map[string]bool `json:"feature_flags"`
	}
	_ = json.Unmarshal([]byte(p.Settings), &settings)
	for k, v := range settings.FeatureFlags {
		if _, ok := flags[k]; ok {
			flags[k] = v
		}
	}
	return flags
}

func flagNames() []string {
	var out []string
	for k := range defaultFeatureFlags {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
