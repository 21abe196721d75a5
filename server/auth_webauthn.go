package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/opsagent/opsagent/store"
)

// webauthnTTL is how long a registration or assertion challenge lives.
const webauthnTTL = 5 * time.Minute

// MfaWebauthnRegisterVerifyRequest carries the PublicKeyCredential JSON from
// navigator.credentials.create.
type MfaWebauthnRegisterVerifyRequest struct {
	Credential json.RawMessage `json:"credential" validate:"required"`
	Name       string          `json:"name,omitempty" validate:"max=120"`
}

// MfaWebauthnAuthOptionsRequest names the user by the mfa_token from login.
// Without it the caller's session is used (step-up).
type MfaWebauthnAuthOptionsRequest struct {
	MFAToken string `json:"mfa_token,omitempty" validate:"max=2048"`
}

// newRelyingParty derives the WebAuthn relying party from OPSAGENT_BASE_URL:
// its host is the RP ID and its scheme://host[:port] the one allowed origin.
// Unset, it is http://localhost:PORT with the listen port (8080 by default),
// which browsers accept as a secure context for local use.
func newRelyingParty(cfg Config) (*webauthn.WebAuthn, string, error) {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		port := "8080"
		if _, p, err := net.SplitHostPort(cfg.Addr); err == nil && p != "" && p != "0" {
			port = p
		}
		base = "http://localhost:" + port
	}
	u, err := url.Parse(base)
	if err != nil {
		return nil, "", err
	}
	origin := u.Scheme + "://" + u.Host
	to := webauthn.TimeoutConfig{Enforce: true, Timeout: webauthnTTL, TimeoutUVD: webauthnTTL}
	wa, err := webauthn.New(&webauthn.Config{RPID: u.Hostname(), RPDisplayName: "opsagent", RPOrigins: []string{origin},
		Timeouts: webauthn.TimeoutsConfig{Login: to, Registration: to}})
	return wa, origin, err
}

// waUser adapts a user and their registered keys to go-webauthn.
type waUser struct {
	id, name, display string
	creds             []webauthn.Credential
	methods           []*store.MFAMethod // parallel to creds
}

func (u *waUser) WebAuthnID() []byte                         { return []byte(u.id) }
func (u *waUser) WebAuthnName() string                       { return u.name }
func (u *waUser) WebAuthnDisplayName() string                { return u.display }
func (u *waUser) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// loadWAUser reads the user and their keys; the stored counter is authoritative.
func (m *mfaFeature) loadWAUser(ctx context.Context, userID string) (*waUser, error) {
	u, err := m.s.db.FindUserByID(ctx, userID)
	if err != nil {
		return nil, err
	}
	methods, err := m.s.db.FindMFAMethods(ctx, userID, store.MFAWebAuthn)
	if err != nil {
		return nil, err
	}
	wu := &waUser{id: u.ID, name: u.Email, display: u.Name}
	if wu.display == "" {
		wu.display = u.Email
	}
	for _, meth := range methods {
		var cred webauthn.Credential
		if err := json.Unmarshal([]byte(meth.Credential), &cred); err != nil {
			loggerFrom(ctx).ErrorContext(ctx, "stored webauthn credential unreadable", "method_id", meth.ID, "err", err)
			continue
		}
		cred.Authenticator.SignCount = meth.SignCount
		wu.creds = append(wu.creds, cred)
		wu.methods = append(wu.methods, meth)
	}
	return wu, nil
}

func (m *mfaFeature) ready() error {
	if m.waErr != nil {
		return &store.Error{Code: store.EInternal, Message: "WebAuthn is not configured", Err: m.waErr}
	}
	return nil
}

func challengeKey(challenge string) []byte {
	h := sha256.Sum256([]byte(challenge))
	return h[:]
}

// putCeremony keeps the session data server-side under its challenge, which
// the client signs and sends back; the challenge is the lookup key.
func (m *mfaFeature) putCeremony(ctx context.Context, userID, purpose string, sess *webauthn.SessionData) error {
	raw, err := json.Marshal(sess)
	if err != nil {
		return err
	}
	return m.s.db.PutWebAuthnChallenge(ctx, challengeKey(sess.Challenge), userID, purpose, string(raw), m.s.Now().Add(webauthnTTL))
}

// takeCeremony spends the ceremony the challenge names (once only).
func (m *mfaFeature) takeCeremony(ctx context.Context, userID, purpose, challenge string) (*webauthn.SessionData, error) {
	raw, err := m.s.db.TakeWebAuthnChallenge(ctx, challengeKey(challenge), userID, purpose)
	if err != nil {
		return nil, err
	}
	var sess webauthn.SessionData
	if err := json.Unmarshal([]byte(raw), &sess); err != nil {
		return nil, err
	}
	return &sess, nil
}

// handleWebAuthnRegisterOptions is POST /api/auth/mfa/webauthn/register/options.
func (m *mfaFeature) handleWebAuthnRegisterOptions(c *Ctx) error {
	if err := m.ready(); err != nil {
		return err
	}
	user, err := m.loadWAUser(c.Context(), c.ID.UserID)
	if err != nil {
		return err
	}
	creation, sess, err := m.wa.BeginRegistration(user, webauthn.WithExclusions(webauthn.Credentials(user.creds).CredentialDescriptors()))
	if err != nil {
		return err
	}
	if err := m.putCeremony(c.Context(), user.id, "register", sess); err != nil {
		return err
	}
	return c.JSON(200, creation)
}

// handleWebAuthnRegisterVerify is POST /api/auth/mfa/webauthn/register/verify.
func (m *mfaFeature) handleWebAuthnRegisterVerify(c *Ctx) error {
	if err := m.ready(); err != nil {
		return err
	}
	var req MfaWebauthnRegisterVerifyRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(req.Credential)
	if err != nil {
		return badRequest("invalid_credential", "The security key response could not be read")
	}
	sess, err := m.takeCeremony(c.Context(), c.ID.UserID, "register", parsed.Response.CollectedClientData.Challenge)
	if store.IsNotFound(err) {
		return badRequest("webauthn_challenge", "Unknown, used or expired challenge; start again")
	}
	if err != nil {
		return err
	}
	user, err := m.loadWAUser(c.Context(), c.ID.UserID)
	if err != nil {
		return err
	}
	cred, err := m.wa.CreateCredential(user, *sess, parsed)
	if err != nil {
		loggerFrom(c.Context()).InfoContext(c.Context(), "webauthn registration refused", "err", err)
		return badRequest("invalid_credential", "The security key response did not verify")
	}
	raw, err := json.Marshal(cred)
	if err != nil {
		return err
	}
	name := strings.TrimSpace(req.Name)
	if name == "" {
		name = "Security key"
	}
	return m.enrol(c, &store.MFAMethod{ID: store.NewID(), UserID: c.ID.UserID, Kind: store.MFAWebAuthn, Name: name,
		CredentialID: cred.ID, Credential: string(raw), SignCount: cred.Authenticator.SignCount})
}

// handleWebAuthnAuthOptions is POST /api/auth/mfa/webauthn/auth/options:
// exempt from the token check; the mfa_token is the credential (or the
// session for step-up).
func (m *mfaFeature) handleWebAuthnAuthOptions(c *Ctx) error {
	if err := m.ready(); err != nil {
		return err
	}
	var req MfaWebauthnAuthOptionsRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	var userID string
	if req.MFAToken != "" {
		u, _, err := m.userOfMFAToken(c.Context(), req.MFAToken)
		if err != nil {
			return err
		}
		userID = u.ID
	} else {
		id, err := m.sessionCaller(c)
		if err != nil {
			return err
		}
		userID = id.UserID
	}
	if ok, retry := m.perIP.Allow(c.ClientIP()); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	user, err := m.loadWAUser(c.Context(), userID)
	if err != nil {
		return err
	}
	if len(user.creds) == 0 {
		return badRequest("no_security_key", "No security key is registered for this account")
	}
	assertion, sess, err := m.wa.BeginLogin(user)
	if err != nil {
		return err
	}
	if err := m.putCeremony(c.Context(), userID, "login", sess); err != nil {
		return err
	}
	return c.JSON(200, assertion)
}

// checkAssertion verifies a WebAuthn assertion for userID. A counter that
// does not grow (other than 0 after 0, "no counter") means a possible clone:
// rejected and audited.
func (m *mfaFeature) checkAssertion(c *Ctx, userID string, raw json.RawMessage) error {
	if err := m.ready(); err != nil {
		return err
	}
	ctx := c.Context()
	if len(raw) == 0 {
		return invalid("Field required", "missing", "body", "credential")
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(raw)
	if err != nil {
		return wrongFactor("The security key response could not be read")
	}
	sess, err := m.takeCeremony(ctx, userID, "login", parsed.Response.CollectedClientData.Challenge)
	if store.IsNotFound(err) {
		return wrongFactor("Unknown, used or expired challenge; ask for new options")
	}
	if err != nil {
		return err
	}
	user, err := m.loadWAUser(ctx, userID)
	if err != nil {
		return err
	}
	cred, err := m.wa.ValidateLogin(user, *sess, parsed)
	if err != nil {
		loggerFrom(ctx).InfoContext(ctx, "webauthn assertion refused", "err", err)
		return wrongFactor("The security key response did not verify")
	}
	var method *store.MFAMethod
	for i, cr := range user.creds {
		if string(cr.ID) == string(cred.ID) {
			method = user.methods[i]
		}
	}
	if method == nil {
		return wrongFactor("Unknown security key")
	}
	ok := false
	if !cred.Authenticator.CloneWarning {
		updated, err := json.Marshal(cred)
		if err != nil {
			return err
		}
		if ok, err = m.s.db.UpdateWebAuthnCounter(ctx, method.ID, cred.Authenticator.SignCount, string(updated)); err != nil {
			return err
		}
	}
	if !ok {
		e := c.auditEvent("auth.mfa_clone_warning", "denied", "mfa_method", method.ID,
			map[string]any{"stored_count": method.SignCount, "presented_count": parsed.Response.AuthenticatorData.Counter})
		e.ActorUserID = userID
		m.s.audit(ctx, e)
		return &store.Error{Code: store.EUnauthorized, Message: "The security key's signature counter did not increase; it may have been cloned", Reason: "webauthn_counter"}
	}
	return nil
}
