package server

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/opsagent/opsagent/server/auth"
	"github.com/opsagent/opsagent/server/mail"
	"github.com/opsagent/opsagent/store"
)

const (
	resetTTL  = time.Hour
	verifyTTL = 48 * time.Hour
)

// sameAnswer is what forgot-password and resend-verify say for every address.
const sameAnswer = "If the address belongs to an account, a message is on its way."

// link builds an absolute console URL for mail.
func (s *Server) link(path string, q url.Values) string {
	base := trimSlash(s.cfg.BaseURL)
	if base == "" {
		base = "http://" + s.cfg.Addr
	}
	return base + path + "?" + q.Encode()
}

// sendMailed creates a single-use token and mails it; failures are logged, not
// returned, so the caller's answer never depends on the address.
func (s *Server) sendMailed(ctx context.Context, u *store.User, kind string, ttl time.Duration, subject, path, intro string) {
	tok := auth.RandomToken(32)
	if err := s.db.CreateEmailToken(ctx, u.ID, kind, auth.HashToken(tok), ttl); err != nil {
		loggerFrom(ctx).Error("mail token", "kind", kind, "err", err)
		return
	}
	body := fmt.Sprintf("%s\n\n%s\n\nThe link works once and expires in %s. If you did not ask for it, ignore this message.\n\nToken: %s\n",
		intro, s.link(path, url.Values{"token": {tok}}), ttl, tok)
	if err := s.mail.Send(ctx, mail.Message{To: u.Email, Subject: subject, Body: body}); err != nil {
		loggerFrom(ctx).Error("send mail", "kind", kind, "err", err)
	}
}

func (s *Server) sendVerification(ctx context.Context, u *store.User) {
	s.sendMailed(ctx, u, store.TokenVerify, verifyTTL, "Verify your opsagent address", "/verify-email",
		"Confirm that this address belongs to your opsagent account:")
}

// handleForgotPassword is POST /api/auth/forgot-password: the same 200 for
// every address; at most a few mails per address per hour. The lookup, the
// token and the mail happen after the answer (s.later), so neither the body
// nor the time taken tells a registered address from an unknown one.
func (s *Server) handleForgotPassword(c *Ctx) error {
	var req ForgotPasswordRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	if s.cfg.DisablePasswordReset {
		return &store.Error{Code: store.EForbidden, Message: "Self-service password reset is disabled; ask an administrator", Reason: "password_reset_disabled"}
	}
	if ok, retry := s.limits.loginIP.Allow("forgot:" + s.clientIP(c.R)); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	email := store.NormalizeEmail(req.Email)
	if ok, _ := s.limits.mailPerAddr.Allow("reset:" + email); ok {
		s.later(c.Context(), func(ctx context.Context) {
			if u, err := s.db.FindUserByEmail(ctx, email); err == nil {
				s.sendMailed(ctx, u, store.TokenReset, resetTTL, "Reset your opsagent password", "/reset-password",
					"Someone asked to reset the password of your opsagent account. Choose a new one here:")
			}
		})
	}
	return c.JSON(200, MessageOut{Detail: sameAnswer})
}

// handleResendVerify is POST /api/auth/resend-verify: the same 200 for every
// address, the work done after the answer as in forgot-password.
func (s *Server) handleResendVerify(c *Ctx) error {
	var req ForgotPasswordRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	if ok, retry := s.limits.loginIP.Allow("verify:" + s.clientIP(c.R)); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	email := store.NormalizeEmail(req.Email)
	if ok, _ := s.limits.mailPerAddr.Allow("verify:" + email); ok {
		s.later(c.Context(), func(ctx context.Context) {
			if u, err := s.db.FindUserByEmail(ctx, email); err == nil && u.EmailVerifiedAt == nil {
				s.sendVerification(ctx, u)
			}
		})
	}
	return c.JSON(200, MessageOut{Detail: sameAnswer})
}

// later runs fn after the response, detached from the request's
// cancellation but keeping its values (logger, request id), bounded in time;
// Serve waits for such work before it returns.
func (s *Server) later(reqCtx context.Context, fn func(ctx context.Context)) {
	s.bg.Go(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(reqCtx), laterTimeout)
		defer cancel()
		fn(ctx)
	})
}

// laterTimeout bounds deferred work (an SMTP relay that never answers).
const laterTimeout = 30 * time.Second

// handleResetPassword is POST /api/auth/reset-password: the token works once,
// and every session of the account ends with the old password.
func (s *Server) handleResetPassword(c *Ctx) error {
	var req ResetPasswordRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	hash, err := s.hasher.Hash(c.Context(), req.NewPassword)
	if err != nil {
		return err
	}
	userID, err := s.db.ResetPassword(c.Context(), auth.HashToken(req.Token), hash)
	if err != nil {
		return err
	}
	e := c.auditEvent("auth.password_reset", "success", "user", userID, nil)
	e.ActorUserID = userID
	s.audit(c.Context(), e)
	return c.NoContent()
}

// handleVerifyEmail is POST /api/auth/verify-email.
func (s *Server) handleVerifyEmail(c *Ctx) error {
	var req VerifyEmailRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	if err := s.db.VerifyEmail(c.Context(), auth.HashToken(req.Token)); err != nil {
		return err
	}
	return c.NoContent()
}

// handleChangePassword is POST /api/auth/change-password: the current password
// is checked (rate-limited like a login); other sessions end.
func (s *Server) handleChangePassword(c *Ctx) error {
	var req ChangePasswordRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	u, err := s.checkOwnPassword(c, req.CurrentPassword, "auth.password_change_failed", "current_password", "Current password is incorrect")
	if err != nil {
		return err
	}
	hash, err := s.hasher.Hash(c.Context(), req.NewPassword)
	if err != nil {
		return err
	}
	if err := s.db.SetPassword(c.Context(), u.ID, hash, c.ID.SessionID); err != nil {
		return err
	}
	c.Audit("auth.password_changed", "success", "user", u.ID, nil)
	return c.NoContent()
}

// checkOwnPassword checks the signed-in person's password, rate-limited like
// a login; a wrong one is audited as failAction and answered as a 422 on
// field.
func (s *Server) checkOwnPassword(c *Ctx, password, failAction, field, msg string) (*store.User, error) {
	if ok, retry := s.limits.loginEmail.Allow(store.NormalizeEmail(c.ID.Email)); !ok {
		return nil, &RateLimitError{RetryAfter: retry}
	}
	u, err := s.db.FindUserByID(c.Context(), c.ID.UserID)
	if err != nil {
		return nil, err
	}
	ok, err := s.hasher.Verify(c.Context(), u.PasswordHash, password)
	if err != nil {
		return nil, err
	}
	if !ok {
		c.Audit(failAction, "failure", "user", u.ID, nil)
		return nil, invalid(msg, "value_error", "body", field)
	}
	return u, nil
}
