package server

import (
	"context"
	"net/http"
	"time"

	"github.com/opsagent/opsagent/server/auth"
	"github.com/opsagent/opsagent/store"
)

// signupMode is the effective sign-up policy: the configured one, or open
// until the first account exists and invite-only after.
func (s *Server) signupMode(ctx context.Context) (string, error) {
	if s.cfg.Signup != "" {
		return s.cfg.Signup, nil
	}
	n, err := s.db.CountUsers(ctx)
	if err != nil {
		return "", err
	}
	if n == 0 {
		return "open", nil
	}
	return "invite", nil
}

// handleAuthConfig is GET /api/auth/config.
func (s *Server) handleAuthConfig(c *Ctx) error {
	mode, err := s.signupMode(c.Context())
	if err != nil {
		return err
	}
	delivery := "outbox"
	if s.cfg.SMTPURL != "" {
		delivery = "smtp"
	}
	return c.JSON(200, AuthConfigOut{Signup: mode, SignupEnabled: mode == "open", PasswordResetEnabled: !s.cfg.DisablePasswordReset,
		EmailDelivery: delivery, MFAMethods: s.mfaKinds(), DeviceFlow: true, PasswordMinLength: 8,
		AccessTokenTTLSeconds: int(accessTTL / time.Second), RefreshGraceSeconds: int(refreshGrace / time.Second),
		RefreshTokenTTLSeconds: int(refreshTTL / time.Second), BaseURL: s.cfg.BaseURL})
}

func (s *Server) mfaKinds() []string { return []string{"totp", "webauthn", "backup_code"} }

// handleRegister is POST /api/auth/register.
func (s *Server) handleRegister(c *Ctx) error {
	var req RegisterRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	mode, err := s.signupMode(c.Context())
	if err != nil {
		return err
	}
	if mode != "open" {
		return &store.Error{Code: store.EForbidden, Message: "Self-service sign-up is disabled; ask for an invitation", Reason: "signup_disabled"}
	}
	if ok, retry := s.limits.register.Allow(s.clientIP(c.R)); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	hash, err := s.hasher.Hash(c.Context(), req.Password)
	if err != nil {
		return err
	}
	u := &store.User{Email: req.Email, Name: req.Name, PasswordHash: hash}
	login, refresh := s.newLogin(c.R, "web")
	now, err := s.db.Register(c.Context(), u, login)
	if err != nil {
		return err
	}
	tokens, err := s.issueLogin(login, refresh, u.CurrentOrgID, now)
	if err != nil {
		return err
	}
	s.later(c.Context(), func(ctx context.Context) { s.sendVerification(ctx, u) }) // an SMTP relay must not hold the answer
	e := c.auditEvent("auth.registered", "success", "user", u.ID, nil)
	e.ActorUserID, e.OrgID = u.ID, u.CurrentOrgID
	s.audit(c.Context(), e)
	return s.respondTokens(c, http.StatusCreated, tokens)
}

// handleLogin is POST /api/auth/login. Rate limits per client IP and per
// address come before any hashing; an unknown address costs the same hash as
// a wrong password; a success clears the address's failures, so strangers can
// slow an account down but never lock it for good.
func (s *Server) handleLogin(c *Ctx) error {
	var req LoginRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	ip := s.clientIP(c.R)
	email := store.NormalizeEmail(req.Email)
	if ok, retry := s.limits.loginIP.Allow(ip); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	if ok, retry := s.limits.loginEmail.Allow(email); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	u, err := s.db.FindUserByEmail(c.Context(), email)
	if err != nil && !store.IsNotFound(err) {
		return err
	}
	encoded := ""
	if u != nil {
		encoded = u.PasswordHash
	}
	ok, err := s.hasher.Verify(c.Context(), encoded, req.Password)
	if err != nil {
		return err
	}
	if u == nil || !ok {
		e := c.auditEvent("auth.login_failed", "failure", "user", "", map[string]any{"email": email})
		if u != nil {
			e.ActorUserID = u.ID
			e.OrgID = u.CurrentOrgID
		}
		s.audit(c.Context(), e)
		return &store.Error{Code: store.EUnauthorized, Message: "Incorrect email or password", Reason: "invalid_credentials"}
	}
	s.limits.loginEmail.Reset(email)
	if auth.NeedsRehash(encoded) {
		s.upgradeHash(c.Context(), u.ID, encoded, req.Password)
	}
	if methods := s.enrolledMFAKinds(c.Context(), u.ID); len(methods) > 0 {
		tok, _, err := s.signer.Issue(auth.TypeMFA, u.ID, "", "", s.Now(), 5*time.Minute)
		if err != nil {
			return err
		}
		return c.JSON(200, LoginResponse{MFARequired: true, MFAToken: tok, MFAMethods: methods})
	}
	return s.completeLogin(c, u, "web")
}

// completeLogin opens a session for a user who passed every factor.
func (s *Server) completeLogin(c *Ctx, u *store.User, kind string) error {
	org, err := s.orgForToken(c.Context(), u)
	if err != nil {
		return err
	}
	login, refresh := s.newLogin(c.R, kind)
	login.UserID = u.ID
	now, err := s.db.StartLogin(c.Context(), login)
	if err != nil {
		return err
	}
	tokens, err := s.issueLogin(login, refresh, org, now)
	if err != nil {
		return err
	}
	e := c.auditEvent("auth.login", "success", "session", tokens.claims.Session, nil)
	e.ActorUserID, e.OrgID = u.ID, org
	s.audit(c.Context(), e)
	return s.respondTokens(c, http.StatusOK, tokens)
}

// upgradeHash redoes, after the answer, the hash of a password that just
// verified against a hash made with older parameters, so stored hashes
// follow the current ones without a password reset. A failure leaves the
// old hash, which still verifies; the next sign-in tries again.
func (s *Server) upgradeHash(reqCtx context.Context, userID, old, password string) {
	s.later(reqCtx, func(ctx context.Context) {
		upgraded, err := s.hasher.Hash(ctx, password)
		if err == nil {
			err = s.db.UpgradePasswordHash(ctx, userID, old, upgraded)
		}
		if err != nil {
			s.log.Warn("password hash upgrade failed", "user_id", userID, "error", err)
		}
	})
}
