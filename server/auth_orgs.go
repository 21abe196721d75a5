package server

import (
	"net/http"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/auth"
	"github.com/opsagent/opsagent/store"
)

// AcceptInviteRequest redeems a mailed invitation. Signed in (bearer or
// cookie) as the invited address: the account joins the org. Not signed in:
// a new account is created for the invited address with password (and name);
// if that address already has an account, sign in first (409 account_exists).
type AcceptInviteRequest struct {
	Token    string `json:"token" validate:"required,min=1,max=200"`
	Password string `json:"password,omitempty" validate:"max=256"`
	Name     string `json:"name,omitempty" validate:"max=120"`
}

func (s *Server) authOrgRoutes() []*Route {
	tags := []string{"auth"}
	return []*Route{
		{Method: "GET", Path: "/api/auth/orgs", Summary: "Every organization I belong to, with my role (a key: its own)", Tags: tags, Auth: AuthAny, Resp: []OrgWithRoleOut{}, Status: 200, Handle: s.handleAuthOrgs},
		{Method: "POST", Path: "/api/auth/switch-org/{org_id}", Summary: "Act in another organization I belong to: the old access token is revoked, a new one issued", Tags: tags, Auth: AuthHuman, Resp: TokenResponse{}, Status: 200, Handle: s.handleSwitchOrg},
		{Method: "POST", Path: "/api/auth/accept-invite", Summary: "Accept an invitation: create the account, or join as the signed-in invited user", Tags: tags, Auth: AuthNone, Body: AcceptInviteRequest{}, Resp: TokenResponse{}, Status: 201, MaxBody: 16 << 10, Handle: s.handleAcceptInvite},
	}
}

// handleAuthOrgs is GET /api/auth/orgs.
func (s *Server) handleAuthOrgs(c *Ctx) error {
	orgs, err := s.db.FindOrgsForUser(c.Context(), c.ID.UserID)
	if err != nil {
		return err
	}
	out := []OrgWithRoleOut{}
	for i := range orgs {
		if !c.ID.Human() && orgs[i].ID != c.ID.OrgID {
			continue
		}
		out = append(out, OrgWithRoleOut{OrganizationOut: orgOut(&orgs[i].Organization), Role: orgs[i].Role, Current: orgs[i].ID == c.ID.OrgID})
	}
	return c.JSON(200, out)
}

// handleSwitchOrg is POST /api/auth/switch-org/{org_id}.
func (s *Server) handleSwitchOrg(c *Ctx) error {
	orgID, err := c.IDParam("org_id")
	if err != nil {
		return err
	}
	if _, err := s.db.FindRole(c.Context(), orgID, c.ID.UserID); err != nil {
		return err
	}
	now, err := s.db.SwitchOrg(c.Context(), c.ID.UserID, orgID, c.ID.JTI, accessTTL)
	if err != nil {
		return err
	}
	access, err := s.reissueAccess(c, orgID, now)
	if err != nil {
		return err
	}
	e := c.auditEvent("auth.org_switched", "success", "organization", orgID, map[string]any{"from": c.ID.OrgID})
	e.OrgID = orgID
	s.audit(c.Context(), e)
	return s.respondAccess(c, http.StatusOK, access)
}

// reissueAccess follows a store method that made orgID the caller's current
// org and blocklisted the caller's access token (at now, in its transaction):
// the old token is refused from now on and a new one is issued for the same
// login session.
func (s *Server) reissueAccess(c *Ctx, orgID string, now time.Time) (string, error) {
	s.revoked.add(c.ID.JTI, s.Now().Add(accessTTL))
	access, _, err := s.signer.Issue(auth.TypeAccess, c.ID.UserID, c.ID.SessionID, orgID, now, accessTTL)
	return access, err
}

// respondAccess answers with a new access token (cookie too); the refresh
// token and its session are unchanged.
func (s *Server) respondAccess(c *Ctx, status int, access string) error {
	s.setAuthCookies(c.W, access, "")
	return c.JSON(status, TokenResponse{AccessToken: access, TokenType: "bearer", ExpiresIn: int(accessTTL / time.Second)})
}

// handleAcceptInvite is POST /api/auth/accept-invite. It works whatever the
// sign-up mode: an invitation is an admin's deliberate act.
func (s *Server) handleAcceptInvite(c *Ctx) error {
	var req AcceptInviteRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	if ok, retry := s.limits.loginIP.Allow("invite:" + s.clientIP(c.R)); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	h := auth.HashToken(strings.TrimSpace(req.Token))
	if tok, _ := bearer(c.R); tok != "" {
		id, _, err := s.authenticate(c.R)
		if err == nil && !id.Human() {
			return &store.Error{Code: store.EForbidden, Message: "API keys cannot accept invitations", Reason: "human_only"}
		}
		if err == nil {
			return s.joinByInvite(c, id, h)
		}
		// A stale or foreign token: the caller is treated as signed out.
	}
	return s.signupByInvite(c, req, h)
}

// joinByInvite adds a signed-in user to the inviting org and moves their
// session there.
func (s *Server) joinByInvite(c *Ctx, id *Identity, tokenHash []byte) error {
	c.ID = id
	inv, now, err := s.db.JoinByInvitation(c.Context(), tokenHash, id.UserID, id.Email, id.JTI, accessTTL)
	if err != nil {
		return err
	}
	access, err := s.reissueAccess(c, inv.OrgID, now)
	if err != nil {
		return err
	}
	e := c.auditEvent("invitation.accepted", "success", "invitation", inv.ID, map[string]any{"role": inv.Role, "new_account": false})
	e.OrgID = inv.OrgID
	s.audit(c.Context(), e)
	return s.respondAccess(c, http.StatusCreated, access)
}

// signupByInvite creates the invited account (its address counts as
// verified: the token came by mail to it) as a member of the inviting org.
func (s *Server) signupByInvite(c *Ctx, req AcceptInviteRequest, tokenHash []byte) error {
	if len(req.Password) < 8 {
		return invalid("String should have at least 8 characters", "string_too_short", "body", "password")
	}
	hash, err := s.hasher.Hash(c.Context(), req.Password)
	if err != nil {
		return err
	}
	u := &store.User{Name: strings.TrimSpace(req.Name), PasswordHash: hash}
	login, refresh := s.newLogin(c.R, "web")
	inv, now, err := s.db.SignupByInvitation(c.Context(), tokenHash, u, login)
	if err != nil {
		return err
	}
	tokens, err := s.issueLogin(login, refresh, inv.OrgID, now)
	if err != nil {
		return err
	}
	e := c.auditEvent("invitation.accepted", "success", "invitation", inv.ID, map[string]any{"role": inv.Role, "new_account": true})
	e.OrgID, e.ActorUserID = inv.OrgID, u.ID
	s.audit(c.Context(), e)
	return s.respondTokens(c, http.StatusCreated, tokens)
}
