package server

import (
	"net/http"
	"time"

	"github.com/opsagent/opsagent/store"
)

// ProjectMemberOut is a user with explicit access to a project. role caps
// their org role inside the project (viewer: read-only there); it never
// raises it. Org owners and admins are never capped.
type ProjectMemberOut struct {
	UserID    string    `json:"user_id"`
	Email     string    `json:"email"`
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	OrgRole   string    `json:"org_role"`
	CreatedAt time.Time `json:"created_at"`
}

// AddProjectMemberRequest gives an org member explicit access to a project.
type AddProjectMemberRequest struct {
	UserID string `json:"user_id" validate:"required,min=36,max=36"`
	Role   string `json:"role" validate:"required,oneof=admin member viewer"`
}

// UpdateProjectMemberRequest changes a project member's role.
type UpdateProjectMemberRequest struct {
	Role string `json:"role" validate:"required,oneof=admin member viewer"`
}

func projectMemberOut(m *store.ProjectMember) ProjectMemberOut {
	return ProjectMemberOut{UserID: m.UserID, Email: m.Email, Name: m.Name, Role: m.Role, OrgRole: m.OrgRole, CreatedAt: m.CreatedAt}
}

func (s *Server) projectMemberRoutes() []*Route {
	tags := []string{"projects"}
	return []*Route{
		{Method: "GET", Path: "/api/projects/{project_id}/members", Summary: "Users with explicit access to the project", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Resp: []ProjectMemberOut{}, Status: 200, Handle: s.handleListProjectMembers},
		{Method: "POST", Path: "/api/projects/{project_id}/members", Summary: "Give an org member explicit access to the project", Tags: tags, Auth: AuthAny, Perm: PermProjectAdmin, Body: AddProjectMemberRequest{}, Resp: ProjectMemberOut{}, Status: 201, MaxBody: 4 << 10, Handle: s.handleAddProjectMember},
		{Method: "PATCH", Path: "/api/projects/{project_id}/members/{user_id}", Summary: "Change a project member's role", Tags: tags, Auth: AuthAny, Perm: PermProjectAdmin, Body: UpdateProjectMemberRequest{}, Resp: ProjectMemberOut{}, Status: 200, MaxBody: 4 << 10, Handle: s.handleUpdateProjectMember},
		{Method: "DELETE", Path: "/api/projects/{project_id}/members/{user_id}", Summary: "Remove a user's explicit access to the project", Tags: tags, Auth: AuthAny, Perm: PermProjectAdmin, Status: 204, Handle: s.handleRemoveProjectMember},
	}
}

// handleListProjectMembers is GET /api/projects/{project_id}/members.
func (s *Server) handleListProjectMembers(c *Ctx) error {
	p, err := s.projectFor(c, c.Param("project_id"))
	if err != nil {
		return err
	}
	ms, err := s.db.FindProjectMembers(c.Context(), c.OrgID(), p.ID)
	if err != nil {
		return err
	}
	out := make([]ProjectMemberOut, len(ms))
	for i := range ms {
		out[i] = projectMemberOut(&ms[i])
	}
	return c.JSON(200, out)
}

// handleAddProjectMember is POST /api/projects/{project_id}/members.
func (s *Server) handleAddProjectMember(c *Ctx) error {
	p, err := s.projectFor(c, c.Param("project_id"))
	if err != nil {
		return err
	}
	var req AddProjectMemberRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	if !store.ValidID(req.UserID) {
		return invalid("Input should be a valid UUID", "uuid_parsing", "body", "user_id")
	}
	m, err := s.db.AddProjectMember(c.Context(), c.OrgID(), p.ID, req.UserID, req.Role)
	if err != nil {
		return err
	}
	c.Audit("project.member_added", "success", "user", req.UserID, map[string]any{"project_id": p.ID, "role": req.Role})
	return c.JSON(http.StatusCreated, projectMemberOut(m))
}

// handleUpdateProjectMember is PATCH /api/projects/{project_id}/members/{user_id}.
func (s *Server) handleUpdateProjectMember(c *Ctx) error {
	p, err := s.projectFor(c, c.Param("project_id"))
	if err != nil {
		return err
	}
	uid, err := c.IDParam("user_id")
	if err != nil {
		return err
	}
	var req UpdateProjectMemberRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	m, err := s.db.UpdateProjectMember(c.Context(), c.OrgID(), p.ID, uid, req.Role)
	if err != nil {
		return err
	}
	c.Audit("project.member_role_changed", "success", "user", uid, map[string]any{"project_id": p.ID, "role": req.Role})
	return c.JSON(200, projectMemberOut(m))
}

// handleRemoveProjectMember is DELETE /api/projects/{project_id}/members/{user_id}.
func (s *Server) handleRemoveProjectMember(c *Ctx) error {
	p, err := s.projectFor(c, c.Param("project_id"))
	if err != nil {
		return err
	}
	uid, err := c.IDParam("user_id")
	if err != nil {
		return err
	}
	if err := s.db.RemoveProjectMember(c.Context(), c.OrgID(), p.ID, uid); err != nil {
		return err
	}
	c.Audit("project.member_removed", "success", "user", uid, map[string]any{"project_id": p.ID})
	return c.NoContent()
}
