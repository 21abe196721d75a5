package server

import (
	"time"

	"github.com/opsagent/opsagent/store"
)

// ReauthWindow is how recent a password or second-factor proof must be for
// a sensitive account change (OWASP ASVS 3.7.1): deleting a second factor,
// creating an API key. Signing in counts; so do POST /api/auth/reauthenticate
// and a step-up second-factor challenge.
const ReauthWindow = 10 * time.Minute

// ReauthRequest proves the password again.
type ReauthRequest struct {
	Password string `json:"password" validate:"required,min=1,max=256"`
}

// ReauthOut says until when sensitive changes are allowed.
type ReauthOut struct {
	ValidUntil time.Time `json:"valid_until"`
}

func (s *Server) reauthRoutes() []*Route {
	return []*Route{
		{Method: "POST", Path: "/api/auth/reauthenticate", Summary: "Prove the password again: sensitive account changes (x-recent-auth routes) need a proof of the last 10 minutes; a step-up second-factor challenge counts too", Tags: []string{"auth"}, Auth: AuthHuman, Body: ReauthRequest{}, Resp: ReauthOut{}, Status: 200, MaxBody: 16 << 10, Handle: s.handleReauthenticate},
	}
}

// handleReauthenticate is POST /api/auth/reauthenticate: the password is
// checked (rate-limited like a login) and the session marked.
func (s *Server) handleReauthenticate(c *Ctx) error {
	var req ReauthRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	u, err := s.checkOwnPassword(c, req.Password, "auth.reauth_failed", "password", "Password is incorrect")
	if err != nil {
		return err
	}
	if err := s.db.MarkReauthenticated(c.Context(), c.ID.UserID, c.ID.SessionID); err != nil {
		return err
	}
	c.Audit("auth.reauthenticated", "success", "user", u.ID, nil)
	return c.JSON(200, ReauthOut{ValidUntil: s.Now().Add(ReauthWindow)})
}

// requireRecentAuth refuses a RecentAuth route unless the session's person
// proved who they are within ReauthWindow.
func (s *Server) requireRecentAuth(c *Ctx) error {
	if c.ID == nil || c.ID.SessionID == "" {
		return &store.Error{Code: store.EForbidden, Message: "Sign in as a person to do this", Reason: "human_only"}
	}
	at, err := s.db.AuthSessionReauthAt(c.Context(), c.ID.UserID, c.ID.SessionID)
	if err != nil && !store.IsNotFound(err) {
		return err
	}
	if err != nil || s.Now().Sub(at) > ReauthWindow {
		return &store.Error{Code: store.EForbidden, Reason: "reauthentication_required",
			Message: "This change needs a recent proof of who you are: POST /api/auth/reauthenticate with your password, or pass a second-factor challenge, then retry"}
	}
	return nil
}
