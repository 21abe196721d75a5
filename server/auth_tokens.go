package server

import (
	"context"
	"crypto/subtle"
	"net/http"
	"time"

	"github.com/opsagent/opsagent/server/auth"
	"github.com/opsagent/opsagent/store"
)

const (
	refreshTTL   = 30 * 24 * time.Hour
	refreshGrace = 30 * time.Second
	// reuseLookback bounds how many older generations are checked to recognise
	// a replayed refresh token (each check is one HMAC).
	reuseLookback = 64
)

// issued is a fresh credential pair for a login session.
type issued struct {
	access  string
	refresh string
	claims  *auth.Claims
}

// newLogin prepares a login session of the given kind for the caller of r:
// its id and salt sign the first refresh token, returned beside it.
func (s *Server) newLogin(r *http.Request, kind string) (*store.NewLogin, string) {
	l := &store.NewLogin{ID: store.NewID(), Salt: auth.RandomBytes(16), UserAgent: truncate(r.UserAgent(), 256),
		IP: s.clientIP(r), Kind: kind, TTL: refreshTTL}
	refresh := s.signer.RefreshToken(l.ID, l.Salt, 0)
	l.RefreshHash = auth.HashToken(refresh)
	return l, refresh
}

// issueLogin signs the access token of login session l, opened at now, acting in orgID.
func (s *Server) issueLogin(l *store.NewLogin, refresh, orgID string, now time.Time) (*issued, error) {
	access, claims, err := s.signer.Issue(auth.TypeAccess, l.UserID, l.ID, orgID, now, accessTTL)
	if err != nil {
		return nil, err
	}
	return &issued{access: access, refresh: refresh, claims: claims}, nil
}

// respondTokens writes the TokenResponse and both cookies.
func (s *Server) respondTokens(c *Ctx, status int, t *issued) error {
	s.setAuthCookies(c.W, t.access, t.refresh)
	return c.JSON(status, TokenResponse{AccessToken: t.access, TokenType: "bearer", ExpiresIn: int(accessTTL / time.Second)})
}

func (s *Server) setAuthCookies(w http.ResponseWriter, access, refresh string) {
	secure := s.cfg.SecureCookies()
	http.SetCookie(w, &http.Cookie{Name: accessCookie, Value: access, Path: "/", MaxAge: int(accessTTL / time.Second),
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode})
	if refresh != "" {
		http.SetCookie(w, &http.Cookie{Name: refreshCookie, Value: refresh, Path: "/api/auth", MaxAge: int(refreshTTL / time.Second),
			HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode})
	}
}

func (s *Server) clearAuthCookies(w http.ResponseWriter) {
	secure := s.cfg.SecureCookies()
	http.SetCookie(w, &http.Cookie{Name: accessCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode})
	http.SetCookie(w, &http.Cookie{Name: refreshCookie, Value: "", Path: "/api/auth", MaxAge: -1, HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode})
}

// orgForToken picks the org a new access token acts in: the user's current
// org if still a member, else their oldest membership.
func (s *Server) orgForToken(ctx context.Context, u *store.User) (string, error) {
	if u.CurrentOrgID != "" {
		if _, err := s.db.FindRole(ctx, u.CurrentOrgID, u.ID); err == nil {
			return u.CurrentOrgID, nil
		}
	}
	orgs, err := s.db.FindOrgsForUser(ctx, u.ID)
	if err != nil {
		return "", err
	}
	if len(orgs) == 0 {
		return "", unauthorized("account has no organization")
	}
	return orgs[0].ID, nil
}

// refreshFromRequest returns the refresh token from the cookie or the body.
func refreshFromRequest(c *Ctx, body string) string {
	if body != "" {
		return body
	}
	if ck, err := c.R.Cookie(refreshCookie); err == nil {
		return ck.Value
	}
	return ""
}

// handleRefresh is POST /api/auth/refresh: section 3's state table. The
// current token rotates; the previous one within 30 s gets the same new token
// (concurrent tabs); the previous one later, or any older one, is reuse of a
// stolen token and revokes the whole session.
func (s *Server) handleRefresh(c *Ctx) error {
	var req RefreshRequest
	if c.R.ContentLength > 0 {
		if err := c.Bind(&req); err != nil {
			return err
		}
	}
	tok := refreshFromRequest(c, req.RefreshToken)
	if tok == "" {
		return unauthorized("No refresh token")
	}
	if ok, retry := s.limits.refresh.Allow(s.clientIP(c.R)); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	sid, ok := auth.SessionOfRefresh(tok)
	if !ok {
		return unauthorized("Invalid refresh token")
	}
	// The store applies the state table in its own transaction, shared with
	// concurrent refreshes (one fsync for a batch of rotations).
	r, err := s.db.RefreshAuthSession(c.Context(), store.RefreshAttempt{
		SessionID: sid, Presented: auth.HashToken(tok), IP: s.clientIP(c.R), UA: truncate(c.R.UserAgent(), 256),
		Grace: refreshGrace, Hash: auth.HashToken,
		Token: func(sess *store.AuthSession, gen int) string { return s.signer.RefreshToken(sess.ID, sess.Salt, gen) },
		Older: func(sess *store.AuthSession) bool { return s.isOlderGeneration(sess, tok) },
	})
	if err != nil {
		return err
	}
	switch r.Outcome {
	case store.RefreshInvalid:
		return unauthorized("Invalid refresh token")
	case store.RefreshEnded:
		return unauthorized("Session has ended; sign in again")
	case store.RefreshNoOrg:
		return unauthorized("account has no organization")
	case store.RefreshReused:
		c.Audit("auth.refresh_reuse", "denied", "session", sid, nil)
		s.clearAuthCookies(c.W)
		return &store.Error{Code: store.EUnauthorized, Message: "Refresh token reuse detected; the session was revoked", Reason: "refresh_reuse"}
	}
	out := &issued{refresh: r.Refresh}
	if out.access, out.claims, err = s.signer.Issue(auth.TypeAccess, r.UserID, sid, r.OrgID, r.Now, accessTTL); err != nil {
		return err
	}
	return s.respondTokens(c, http.StatusOK, out)
}

// isOlderGeneration recognises a token this session issued before.
func (s *Server) isOlderGeneration(sess *store.AuthSession, tok string) bool {
	for g := sess.Generation - 1; g >= 0 && g >= sess.Generation-reuseLookback; g-- {
		if subtle.ConstantTimeCompare([]byte(tok), []byte(s.signer.RefreshToken(sess.ID, sess.Salt, g))) == 1 {
			return true
		}
	}
	return false
}

// handleLogout is POST /api/auth/logout: best effort, exempt from the token
// check so an expired session can still clear its cookies.
func (s *Server) handleLogout(c *Ctx) error {
	ctx := c.Context()
	var sid, userID string
	if ck, err := c.R.Cookie(refreshCookie); err == nil {
		if id, ok := auth.SessionOfRefresh(ck.Value); ok {
			if sess, err := s.db.FindAuthSessionByID(ctx, id); err == nil &&
				subtle.ConstantTimeCompare(auth.HashToken(ck.Value), sess.RefreshHash) == 1 {
				sid, userID = id, sess.UserID
			}
		}
	}
	tok, _ := bearer(c.R)
	claims, _ := s.signer.Verify(tok, auth.TypeAccess)
	if claims != nil {
		if sid == "" {
			sid = claims.Session
		}
		userID = claims.Subject
	}
	var jti string
	var exp time.Time
	if claims != nil {
		jti, exp = claims.ID, claims.ExpiresAt.Time
	}
	if err := s.db.EndLogin(ctx, sid, jti, exp); err != nil {
		return err
	}
	if claims != nil {
		s.revoked.add(claims.ID, claims.ExpiresAt.Time)
	}
	if userID != "" {
		e := c.auditEvent("auth.logout", "success", "session", sid, nil)
		e.ActorUserID = userID
		s.audit(ctx, e)
	}
	s.clearAuthCookies(c.W)
	return c.NoContent()
}

// handleLogoutAll is POST /api/auth/logout-all: every session revoked and the
// user's epoch stamped, which also voids their API keys.
func (s *Server) handleLogoutAll(c *Ctx) error {
	ctx := c.Context()
	if err := s.db.EndAllLogins(ctx, c.ID.UserID, c.ID.JTI, accessTTL); err != nil {
		return err
	}
	s.revoked.add(c.ID.JTI, s.Now().Add(accessTTL))
	c.Audit("auth.logout_all", "success", "user", c.ID.UserID, nil)
	s.clearAuthCookies(c.W)
	return c.NoContent()
}
