package server

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/opsagent/opsagent/server/auth"
	"github.com/opsagent/opsagent/server/mail"
	"github.com/opsagent/opsagent/store"
)

// inviteTTL is how long an invitation link works.
const inviteTTL = 7 * 24 * time.Hour

// InviteCreate invites an address with a role. Inviting a current member is
// 409; inviting an address with a pending invitation replaces it.
type InviteCreate struct {
	Email string `json:"email" validate:"required,email,max=254"`
	Role  string `json:"role" validate:"required,oneof=owner admin member viewer"`
}

// InvitationOut is an invitation as the org's admins see it. status is
// pending, accepted, revoked or expired. The token is never shown: it
// travels by mail to the invited address only.
type InvitationOut struct {
	ID        string     `json:"id"`
	OrgID     string     `json:"org_id"`
	Email     string     `json:"email"`
	Role      string     `json:"role"`
	Status    string     `json:"status"`
	InvitedBy *string    `json:"invited_by"`
	ExpiresAt time.Time  `json:"expires_at"`
	Accepted  *time.Time `json:"accepted_at"`
	CreatedAt time.Time  `json:"created_at"`
}

// InviteResponse answers a new invitation.
type InviteResponse struct {
	InvitationOut
	Detail string `json:"detail"`
}

func (s *Server) invitationRoutes() []*Route {
	tags := []string{"organizations"}
	return []*Route{
		{Method: "POST", Path: "/api/organizations/{org_id}/invitations", Summary: "Invite an address to the organization (mailed, single-use, expires in 7 days)", Tags: tags, Auth: AuthAny, Perm: PermOrgAdmin, Body: InviteCreate{}, Resp: InviteResponse{}, Status: 201, MaxBody: 8 << 10, Handle: s.handleCreateInvitation},
		{Method: "GET", Path: "/api/organizations/{org_id}/invitations", Summary: "Invitations of the organization, newest first", Tags: tags, Auth: AuthAny, Perm: PermOrgAdmin, Resp: []InvitationOut{}, Status: 200, Handle: s.handleListInvitations},
		{Method: "DELETE", Path: "/api/organizations/{org_id}/invitations/{invitation_id}", Summary: "Revoke a pending invitation", Tags: tags, Auth: AuthAny, Perm: PermOrgAdmin, Status: 204, Handle: s.handleRevokeInvitation},
	}
}

func (s *Server) invitationOut(i *store.Invitation) InvitationOut {
	return InvitationOut{ID: i.ID, OrgID: i.OrgID, Email: i.Email, Role: i.Role, Status: i.Status(s.Now()), InvitedBy: strPtr(i.InvitedBy),
		ExpiresAt: i.ExpiresAt, Accepted: i.AcceptedAt, CreatedAt: i.CreatedAt}
}

// handleCreateInvitation is POST /api/organizations/{org_id}/invitations.
func (s *Server) handleCreateInvitation(c *Ctx) error {
	var req InviteCreate
	if err := c.Bind(&req); err != nil {
		return err
	}
	if req.Role == RoleOwner && c.ID.Role != RoleOwner {
		return &store.Error{Code: store.EForbidden, Message: "only an owner can invite an owner", Reason: "owner_required"}
	}
	email := store.NormalizeEmail(req.Email)
	if ok, retry := s.limits.mailPerAddr.Allow("invite:" + email); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	tok := auth.RandomToken(32)
	inv := &store.Invitation{OrgID: c.OrgID(), Email: email, Role: req.Role, TokenHash: auth.HashToken(tok), InvitedBy: c.ID.UserID,
		ExpiresAt: s.Now().Add(inviteTTL)}
	if err := s.db.CreateInvitation(c.Context(), inv); err != nil {
		return err
	}
	body := fmt.Sprintf("%s invited you to join the organization %q on opsagent as %s.\n\nAccept here:\n\n%s\n\n"+
		"The link works once, only for %s, and expires in 7 days. If you did not expect it, ignore this message.\n\nToken: %s\n",
		c.ID.Email, inv.OrgName, inv.Role, s.link("/accept-invite", url.Values{"token": {tok}}), inv.Email, tok)
	if err := s.mail.Send(c.Context(), mail.Message{To: inv.Email, Subject: "You are invited to " + inv.OrgName + " on opsagent", Body: body}); err != nil {
		// The invitation stands; an admin can re-invite to send it again.
		loggerFrom(c.Context()).Error("send invitation", "invitation_id", inv.ID, "err", err)
	}
	c.Audit("invitation.created", "success", "invitation", inv.ID, map[string]any{"email": inv.Email, "role": inv.Role})
	return c.JSON(http.StatusCreated, InviteResponse{InvitationOut: s.invitationOut(inv), Detail: "Invitation sent to " + inv.Email})
}

// handleListInvitations is GET /api/organizations/{org_id}/invitations.
func (s *Server) handleListInvitations(c *Ctx) error {
	list, err := s.db.FindInvitations(c.Context(), c.OrgID())
	if err != nil {
		return err
	}
	out := make([]InvitationOut, len(list))
	for i, inv := range list {
		out[i] = s.invitationOut(inv)
	}
	return c.JSON(200, out)
}

// handleRevokeInvitation is DELETE /api/organizations/{org_id}/invitations/{invitation_id}.
func (s *Server) handleRevokeInvitation(c *Ctx) error {
	id, err := c.IDParam("invitation_id")
	if err != nil {
		return err
	}
	if err := s.db.RevokeInvitation(c.Context(), c.OrgID(), id); err != nil {
		return err
	}
	c.Audit("invitation.revoked", "success", "invitation", id, nil)
	return c.NoContent()
}
