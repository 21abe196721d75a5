package server

import (
	"github.com/opsagent/opsagent/server/auth"
)

// handleListSessions is GET /api/auth/sessions. The current session is the one
// the access token is bound to (or the refresh cookie names).
func (s *Server) handleListSessions(c *Ctx) error {
	sessions, err := s.db.FindActiveAuthSessions(c.Context(), c.ID.UserID)
	if err != nil {
		return err
	}
	current := c.ID.SessionID
	if ck, err := c.R.Cookie(refreshCookie); err == nil {
		if id, ok := auth.SessionOfRefresh(ck.Value); ok {
			current = id
		}
	}
	out := make([]SessionOut, 0, len(sessions))
	for _, ss := range sessions {
		out = append(out, SessionOut{ID: ss.ID, Kind: ss.Kind, UserAgent: ss.UserAgent, IP: ss.IP, Current: ss.ID == current,
			CreatedAt: ss.CreatedAt, LastUsedAt: ss.LastUsedAt, ExpiresAt: ss.ExpiresAt})
	}
	return c.JSON(200, out)
}

// handleDeleteSession is DELETE /api/auth/sessions/{session_id}: only the
// caller's own sessions; anyone else's id is a 404.
func (s *Server) handleDeleteSession(c *Ctx) error {
	id, err := c.IDParam("session_id")
	if err != nil {
		return err
	}
	if err := s.db.RevokeUserAuthSession(c.Context(), c.ID.UserID, id); err != nil {
		return err
	}
	c.Audit("auth.session_revoked", "success", "session", id, nil)
	if id == c.ID.SessionID {
		s.clearAuthCookies(c.W)
	}
	return c.NoContent()
}

// handleDeleteAccount is DELETE /api/auth/me/account: 202 with an erasure
// request; sessions end now, the worker removes the data.
func (s *Server) handleDeleteAccount(c *Ctx) error {
	id, err := s.db.RequestErasure(c.Context(), c.ID.UserID)
	if err != nil {
		return err // 400 sole_owner when an organization would be left without an owner
	}
	c.Audit("auth.account_deleted", "success", "user", c.ID.UserID, nil)
	s.clearAuthCookies(c.W)
	return c.JSON(202, AccountDeletionOut{Detail: "Account closed; its data will be erased shortly", RequestID: id, Status: "pending"})
}
