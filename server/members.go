package server

import (
	"time"

	"github.com/opsagent/opsagent/store"
)

// MemberOut is one member of an org.
type MemberOut struct {
	UserID   string    `json:"user_id"`
	Email    string    `json:"email"`
	Name     string    `json:"name"`
	Role     string    `json:"role"`
	JoinedAt time.Time `json:"joined_at"`
}

// UpdateMemberRoleRequest sets a member's org role. Only an owner may make
// someone owner or change an owner's role; the last owner cannot be demoted.
type UpdateMemberRoleRequest struct {
	Role string `json:"role" validate:"required,oneof=owner admin member viewer"`
}

func memberOut(m *store.Member) MemberOut {
	return MemberOut{UserID: m.UserID, Email: m.Email, Name: m.Name, Role: m.Role, JoinedAt: m.JoinedAt}
}

func (s *Server) memberRoutes() []*Route {
	tags := []string{"organizations"}
	return []*Route{
		{Method: "GET", Path: "/api/organizations/{org_id}/members", Summary: "Members of the organization with their roles", Tags: tags, Auth: AuthAny, Perm: PermOrgRead, Resp: []MemberOut{}, Status: 200, MCP: true, Handle: s.handleListMembers},
		{Method: "PATCH", Path: "/api/organizations/{org_id}/members/{user_id}", Summary: "Change a member's role", Tags: tags, Auth: AuthAny, Perm: PermOrgAdmin, Body: UpdateMemberRoleRequest{}, Resp: MemberOut{}, Status: 200, MaxBody: 4 << 10, Handle: s.handleUpdateMember},
		{Method: "DELETE", Path: "/api/organizations/{org_id}/members/{user_id}", Summary: "Remove a member (their API keys in the org are revoked)", Tags: tags, Auth: AuthAny, Perm: PermOrgAdmin, Status: 204, Handle: s.handleRemoveMember},
		{Method: "POST", Path: "/api/organizations/{org_id}/leave", Summary: "Leave the organization (the last owner must promote someone first)", Tags: tags, Auth: AuthHuman, Status: 204, Handle: s.handleLeaveOrg},
	}
}

// handleListMembers is GET /api/organizations/{org_id}/members.
func (s *Server) handleListMembers(c *Ctx) error {
	ms, err := s.db.FindMembers(c.Context(), c.OrgID())
	if err != nil {
		return err
	}
	out := make([]MemberOut, len(ms))
	for i, m := range ms {
		out[i] = memberOut(m)
	}
	return c.JSON(200, out)
}

// ownerGuard: touching an owner, or granting owner, takes an owner.
func ownerGuard(actorRole, newRole string) store.MemberGuard {
	return func(target string) error {
		if (target == RoleOwner || newRole == RoleOwner) && actorRole != RoleOwner {
			return &store.Error{Code: store.EForbidden, Message: "only an owner can grant the owner role or change an owner", Reason: "owner_required"}
		}
		return nil
	}
}

// handleUpdateMember is PATCH /api/organizations/{org_id}/members/{user_id}.
func (s *Server) handleUpdateMember(c *Ctx) error {
	uid, err := c.IDParam("user_id")
	if err != nil {
		return err
	}
	var req UpdateMemberRoleRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	m, old, err := s.db.ChangeMemberRole(c.Context(), c.OrgID(), uid, req.Role, ownerGuard(c.ID.Role, req.Role))
	if err != nil {
		return err
	}
	c.Audit("member.role_changed", "success", "user", uid, map[string]any{"from": old, "to": m.Role})
	return c.JSON(200, memberOut(m))
}

// handleRemoveMember is DELETE /api/organizations/{org_id}/members/{user_id}.
func (s *Server) handleRemoveMember(c *Ctx) error {
	uid, err := c.IDParam("user_id")
	if err != nil {
		return err
	}
	if err := s.db.RemoveMember(c.Context(), c.OrgID(), uid, ownerGuard(c.ID.Role, "")); err != nil {
		return err
	}
	c.Audit("member.removed", "success", "user", uid, nil)
	return c.NoContent()
}

// handleLeaveOrg is POST /api/organizations/{org_id}/leave.
func (s *Server) handleLeaveOrg(c *Ctx) error {
	err := s.db.RemoveMember(c.Context(), c.OrgID(), c.ID.UserID, func(string) error { return nil })
	if err != nil {
		return err
	}
	c.Audit("member.left", "success", "user", c.ID.UserID, nil)
	return c.NoContent()
}
