package server

import (
	"context"
	"encoding/json"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/opsagent/opsagent/server/auth"
	"github.com/opsagent/opsagent/server/ratelimit"
	"github.com/opsagent/opsagent/store"
)

// mfaTokenTTL bounds the gap between the password and the second factor.
const mfaTokenTTL = 5 * time.Minute

// MfaMethodOut is one enrolled second factor. The backup-code set is listed
// as a method of kind backup_code with the number of unused codes.
type MfaMethodOut struct {
	ID             string     `json:"id"`
	Kind           string     `json:"kind"`
	Name           string     `json:"name"`
	CreatedAt      time.Time  `json:"created_at"`
	LastUsedAt     *time.Time `json:"last_used_at"`
	RemainingCodes *int       `json:"remaining_codes,omitempty"`
}

// MfaEnrollResponse answers a successful enrolment; BackupCodes is set (once,
// never shown again) when this is the user's first second factor.
type MfaEnrollResponse struct {
	Method      MfaMethodOut `json:"method"`
	BackupCodes []string     `json:"backup_codes,omitempty"`
}

// MfaChallengeRequest proves one factor: at login with the mfa_token from
// /api/auth/login, or in-session (access token, no mfa_token) as step-up.
// code carries a TOTP or backup code; credential the WebAuthn assertion (the
// PublicKeyCredential JSON from navigator.credentials.get).
type MfaChallengeRequest struct {
	MFAToken   string          `json:"mfa_token,omitempty" validate:"max=2048"`
	Method     string          `json:"method" validate:"required,oneof=totp webauthn backup_code"`
	Code       string          `json:"code,omitempty" validate:"max=64"`
	Credential json.RawMessage `json:"credential,omitempty"`
}

// mfaFeature holds what the second-factor routes share: the WebAuthn relying
// party and the limiter of wrong factors.
type mfaFeature struct {
	s      *Server
	wa     *webauthn.WebAuthn
	waErr  error
	origin string
	// Wrong factors are limited like passwords: per user and per client IP.
	perUser, perIP *ratelimit.Limiter
}

func (s *Server) newMFAFeature() *mfaFeature {
	m := &mfaFeature{s: s, perUser: ratelimit.New(10, 5*time.Minute), perIP: ratelimit.New(30, time.Minute)}
	for _, l := range []*ratelimit.Limiter{m.perUser, m.perIP} {
		l.Now = func() time.Time { return s.Now() }
	}
	m.wa, m.origin, m.waErr = newRelyingParty(s.cfg)
	return m
}

// mfaRoutes: second factors (spec 4.1 MFA rows).
func (s *Server) mfaRoutes() []*Route {
	m := s.newMFAFeature()
	tags := []string{"mfa"}
	return []*Route{
		{Method: "GET", Path: "/api/auth/mfa/methods", Summary: "List my second factors", Tags: tags, Auth: AuthHuman, Resp: []MfaMethodOut{}, Status: 200, Handle: m.handleMethods},
		{Method: "POST", Path: "/api/auth/mfa/totp/setup", Summary: "Start TOTP enrolment: QR code and a sealed secret to echo back (nothing is stored yet)", Tags: tags, Auth: AuthHuman, Resp: MfaTotpSetupResponse{}, Status: 200, Handle: m.handleTOTPSetup},
		{Method: "POST", Path: "/api/auth/mfa/totp/verify", Summary: "Finish TOTP enrolment with a code from the app", Tags: tags, Auth: AuthHuman, Body: MfaTotpVerifyRequest{}, Resp: MfaEnrollResponse{}, Status: 200, MaxBody: 16 << 10, Handle: m.handleTOTPVerify},
		{Method: "POST", Path: "/api/auth/mfa/webauthn/register/options", Summary: "WebAuthn registration options (single-use challenge, 5 minutes)", Tags: tags, Auth: AuthHuman, Status: 200, Handle: m.handleWebAuthnRegisterOptions},
		{Method: "POST", Path: "/api/auth/mfa/webauthn/register/verify", Summary: "Finish registering a security key", Tags: tags, Auth: AuthHuman, Body: MfaWebauthnRegisterVerifyRequest{}, Resp: MfaEnrollResponse{}, Status: 200, MaxBody: 64 << 10, Handle: m.handleWebAuthnRegisterVerify},
		{Method: "POST", Path: "/api/auth/mfa/webauthn/auth/options", Summary: "WebAuthn assertion options; the mfa_token is the only credential (or the session, for step-up)", Tags: tags, Auth: AuthNone, Body: MfaWebauthnAuthOptionsRequest{}, Status: 200, MaxBody: 16 << 10, Handle: m.handleWebAuthnAuthOptions},
		{Method: "POST", Path: "/api/auth/mfa/challenge", Summary: "Prove a second factor: completes login (with mfa_token) or steps up a session", Tags: tags, Auth: AuthNone, Body: MfaChallengeRequest{}, Resp: LoginResponse{}, Status: 200, MaxBody: 64 << 10, Handle: m.handleChallenge},
		{Method: "DELETE", Path: "/api/auth/mfa/{method_id}", Summary: "Remove a second factor (backup codes go with the last one); needs a recent re-authentication", Tags: tags, Auth: AuthHuman, RecentAuth: true, Status: 204, Handle: m.handleDeleteMethod},
		{Method: "POST", Path: "/api/auth/mfa/backup-codes/regenerate", Summary: "Replace the backup codes; needs proof of a current factor", Tags: tags, Auth: AuthHuman, Body: MfaChallengeRequest{}, Resp: BackupCodesResponse{}, Status: 200, MaxBody: 64 << 10, Handle: m.handleRegenerateBackupCodes},
	}
}

// enrolledMFAKinds is the mfaMethods hook. A database error fails closed: the
// login then asks for a factor rather than silently skipping it.
func (s *Server) enrolledMFAKinds(ctx context.Context, userID string) []string {
	kinds, err := s.db.MFAKinds(ctx, userID)
	if err != nil {
		loggerFrom(ctx).ErrorContext(ctx, "mfa methods lookup failed; asking for a factor", "err", err)
		return []string{store.MFATOTP, store.MFAWebAuthn, store.MFABackupCode}
	}
	return kinds
}

func methodOut(m *store.MFAMethod) MfaMethodOut {
	out := MfaMethodOut{ID: m.ID, Kind: m.Kind, Name: m.Name, CreatedAt: m.CreatedAt, LastUsedAt: m.LastUsedAt}
	if m.Kind == store.MFABackupCode {
		n := m.Remaining
		out.RemainingCodes = &n
	}
	return out
}

// handleMethods is GET /api/auth/mfa/methods.
func (m *mfaFeature) handleMethods(c *Ctx) error {
	ms, err := m.s.db.FindMFAMethods(c.Context(), c.ID.UserID, "")
	if err != nil {
		return err
	}
	out := make([]MfaMethodOut, 0, len(ms))
	for _, x := range ms {
		out = append(out, methodOut(x))
	}
	return c.JSON(200, out)
}

// handleDeleteMethod is DELETE /api/auth/mfa/{method_id}.
func (m *mfaFeature) handleDeleteMethod(c *Ctx) error {
	id, err := c.IDParam("method_id")
	if err != nil {
		return err
	}
	if err := m.s.db.DeleteMFAMethod(c.Context(), c.ID.UserID, id); err != nil {
		return err
	}
	c.Audit("auth.mfa_removed", "success", "mfa_method", id, nil)
	return c.NoContent()
}

// handleChallenge is POST /api/auth/mfa/challenge. With an mfa_token it
// completes a login (the token is spent); without one it needs a signed-in
// session and answers a fresh access token for it (step-up).
func (m *mfaFeature) handleChallenge(c *Ctx) error {
	var req MfaChallengeRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	if req.MFAToken != "" {
		u, claims, err := m.userOfMFAToken(c.Context(), req.MFAToken)
		if err != nil {
			return err
		}
		if err := m.verifyFactor(c, u.ID, &req); err != nil {
			return err
		}
		if err := m.spendMFAToken(c.Context(), claims); err != nil {
			return err
		}
		return m.s.completeLogin(c, u, "web")
	}
	id, err := m.sessionCaller(c)
	if err != nil {
		return err
	}
	if err := m.verifyFactor(c, id.UserID, &req); err != nil {
		return err
	}
	if err := m.s.db.MarkReauthenticated(c.Context(), id.UserID, id.SessionID); err != nil { // a step-up is a fresh proof
		return err
	}
	access, _, err := m.s.signer.Issue(auth.TypeAccess, id.UserID, id.SessionID, id.OrgID, m.s.Now(), accessTTL)
	if err != nil {
		return err
	}
	m.s.setAuthCookies(c.W, access, "")
	return c.JSON(200, LoginResponse{AccessToken: access, TokenType: "bearer", ExpiresIn: int(accessTTL / time.Second)})
}

// userOfMFAToken checks an mfa_token (typed, unexpired, unspent) and returns its user.
func (m *mfaFeature) userOfMFAToken(ctx context.Context, tok string) (*store.User, *auth.Claims, error) {
	claims, err := m.s.signer.Verify(tok, auth.TypeMFA)
	if err != nil || m.s.revoked.has(claims.ID) {
		return nil, nil, &store.Error{Code: store.EUnauthorized, Message: "Invalid or expired mfa_token; sign in again", Reason: "invalid_mfa_token"}
	}
	u, err := m.s.db.FindUserByID(ctx, claims.Subject)
	if store.IsNotFound(err) {
		return nil, nil, &store.Error{Code: store.EUnauthorized, Message: "Invalid or expired mfa_token; sign in again", Reason: "invalid_mfa_token"}
	}
	return u, claims, err
}

// spendMFAToken blocklists the token's id so it completes one login only.
func (m *mfaFeature) spendMFAToken(ctx context.Context, claims *auth.Claims) error {
	exp := claims.ExpiresAt.Time
	if err := m.s.db.RevokeToken(ctx, claims.ID, exp); err != nil {
		return err
	}
	m.s.revoked.add(claims.ID, exp)
	return nil
}

// sessionCaller authenticates a route that is exempt from the token check
// but also serves signed-in people (step-up): a person's access token, with
// the cross-origin check when it came in a cookie.
func (m *mfaFeature) sessionCaller(c *Ctx) (*Identity, error) {
	id, viaCookie, err := m.s.authenticate(c.R)
	if err != nil {
		return nil, err
	}
	if viaCookie {
		if err := m.s.cop.Check(c.R); err != nil {
			return nil, forbidden("cross-origin request refused")
		}
	}
	if !id.Human() {
		return nil, &store.Error{Code: store.EForbidden, Message: "API keys cannot call this route; sign in as a person", Reason: "human_only"}
	}
	c.ID = id
	return id, nil
}

// verifyFactor checks one factor of userID. Every attempt counts against the
// per-user and per-IP limits; a success clears the user's count.
func (m *mfaFeature) verifyFactor(c *Ctx, userID string, req *MfaChallengeRequest) error {
	if ok, retry := m.perIP.Allow(c.ClientIP()); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	if ok, retry := m.perUser.Allow(userID); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	var err error
	switch req.Method {
	case store.MFATOTP:
		err = m.checkTOTP(c.Context(), userID, req.Code)
	case store.MFABackupCode:
		err = m.useBackupCode(c.Context(), userID, req.Code)
	case store.MFAWebAuthn:
		err = m.checkAssertion(c, userID, req.Credential)
	}
	if err != nil {
		e := c.auditEvent("auth.mfa_failed", "failure", "user", userID, map[string]any{"method": req.Method})
		e.ActorUserID = userID
		m.s.audit(c.Context(), e)
		return err
	}
	m.perUser.Reset(userID)
	e := c.auditEvent("auth.mfa_verified", "success", "user", userID, map[string]any{"method": req.Method})
	e.ActorUserID = userID
	m.s.audit(c.Context(), e)
	return nil
}

// wrongFactor is the one answer to any factor that does not check out.
func wrongFactor(msg string) error {
	return &store.Error{Code: store.EUnauthorized, Message: msg, Reason: "invalid_mfa"}
}
