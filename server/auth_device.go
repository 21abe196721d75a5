package server

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/auth"
	"github.com/opsagent/opsagent/server/ratelimit"
	"github.com/opsagent/opsagent/store"
)

// Device authorization (RFC 8628) for `opsagent login`. User codes are 8
// letters from an alphabet without vowels or look-alikes (20^8, about 2.6e10),
// live 10 minutes, and every lookup counts against per-user and per-IP limits
// (30 and 60 per 15 minutes), so guessing a live code is hopeless. Polling is
// one indexed read, so the interval is a brisk 2 seconds.
const (
	userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"
	userCodeLen      = 8
	deviceCodeTTL    = 10 * time.Minute
	deviceInterval   = 2 // seconds
	deviceGrantType  = "urn:ietf:params:oauth:grant-type:device_code"
	cliGrantPath     = "/cli-grant"
)

// DeviceCodeRequest starts a device sign-in. Form-encoded (RFC 8628 clients
// such as golang.org/x/oauth2) or JSON.
type DeviceCodeRequest struct {
	ClientID   string `json:"client_id,omitempty" validate:"max=120"`
	ClientName string `json:"client_name,omitempty" validate:"max=120"`
	Scope      string `json:"scope,omitempty" validate:"max=500"`
}

// DeviceCodeResponse has RFC 8628 section 3.2 field names.
type DeviceCodeResponse struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int    `json:"expires_in"`
	Interval                int    `json:"interval"`
}

// DeviceTokenRequest polls for the result (RFC 8628 section 3.4), form or JSON.
type DeviceTokenRequest struct {
	GrantType  string `json:"grant_type,omitempty" validate:"max=200"`
	DeviceCode string `json:"device_code" validate:"required,max=200"`
	ClientID   string `json:"client_id,omitempty" validate:"max=120"`
}

// DeviceTokenSuccess is a TokenResponse plus the refresh token of the new
// "cli" login session (listed in /api/auth/sessions, revocable there).
type DeviceTokenSuccess struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
}

// DeviceTokenError is an RFC 8628 section 3.5 error, sent with HTTP 400:
// authorization_pending, slow_down, access_denied, expired_token,
// invalid_grant, invalid_request, unsupported_grant_type.
type DeviceTokenError struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description,omitempty"`
}

// CliGrantInfoResponse tells the person what is asking to sign in.
type CliGrantInfoResponse struct {
	UserCode   string    `json:"user_code"`
	ClientName string    `json:"client_name"`
	IP         string    `json:"ip"`
	UserAgent  string    `json:"user_agent"`
	Status     string    `json:"status"`
	CreatedAt  time.Time `json:"created_at"`
	ExpiresAt  time.Time `json:"expires_at"`
}

// CliGrantInfoQuery names the grant by its user code.
type CliGrantInfoQuery struct {
	UserCode string `query:"user_code" validate:"required,min=1,max=32"`
}

// CliGrantRedeemRequest approves a grant for the signed-in user.
type CliGrantRedeemRequest struct {
	UserCode string `json:"user_code" validate:"required,min=1,max=32"`
}

// CliGrantDenyRequest refuses a grant.
type CliGrantDenyRequest struct {
	UserCode string `json:"user_code" validate:"required,min=1,max=32"`
}

type deviceFeature struct {
	s *Server
	// start bounds device-code creation per IP; guessUser/guessIP bound user-code lookups.
	start, guessUser, guessIP *ratelimit.Limiter
}

// deviceRoutes: device-code sign-in and the browser side that confirms it.
func (s *Server) deviceRoutes() []*Route {
	d := &deviceFeature{s: s, start: ratelimit.New(30, 10*time.Minute),
		guessUser: ratelimit.New(30, 15*time.Minute), guessIP: ratelimit.New(60, 15*time.Minute)}
	for _, l := range []*ratelimit.Limiter{d.start, d.guessUser, d.guessIP} {
		l.Now = func() time.Time { return s.Now() }
	}
	tags := []string{"auth"}
	return []*Route{
		{Method: "POST", Path: "/api/auth/device-code", Summary: "Start a device sign-in (RFC 8628; form or JSON body)", Tags: tags, Auth: AuthNone, Body: DeviceCodeRequest{}, Resp: DeviceCodeResponse{}, Status: 200, MaxBody: 8 << 10, RawBody: true, Handle: d.handleDeviceCode},
		{Method: "POST", Path: "/api/auth/device-token", Summary: "Poll a device sign-in (RFC 8628; errors are 400 DeviceTokenError)", Tags: tags, Auth: AuthNone, Body: DeviceTokenRequest{}, Resp: DeviceTokenSuccess{}, Status: 200, ErrorResp: map[int]any{400: DeviceTokenError{}}, MaxBody: 8 << 10, RawBody: true, Handle: d.handleDeviceToken},
		{Method: "GET", Path: "/api/auth/cli-grant/info", Summary: "What is asking to sign in with this user code", Tags: tags, Auth: AuthHuman, Query: CliGrantInfoQuery{}, Resp: CliGrantInfoResponse{}, Status: 200, Handle: d.handleGrantInfo},
		{Method: "POST", Path: "/api/auth/cli-grant/redeem", Summary: "Approve a device sign-in as me", Tags: tags, Auth: AuthHuman, Body: CliGrantRedeemRequest{}, Status: 204, MaxBody: 4 << 10, Handle: d.handleGrantRedeem},
		{Method: "POST", Path: "/api/auth/cli-grant/deny", Summary: "Refuse a device sign-in", Tags: tags, Auth: AuthHuman, Body: CliGrantDenyRequest{}, Status: 204, MaxBody: 4 << 10, Handle: d.handleGrantDeny},
	}
}

// bindFormOrJSON decodes a form-encoded or JSON body into dst with the same
// validation either way (form values become JSON strings).
func bindFormOrJSON(c *Ctx, dst any) error {
	ct, _, _ := mime.ParseMediaType(c.R.Header.Get("Content-Type"))
	if ct != "application/x-www-form-urlencoded" {
		return c.Bind(dst)
	}
	raw, err := io.ReadAll(c.R.Body)
	if err != nil {
		return err
	}
	vals, err := url.ParseQuery(string(raw))
	if err != nil {
		return invalid("Malformed form body", "value_error", "body")
	}
	obj := map[string]string{}
	for k, v := range vals {
		obj[k] = v[0]
	}
	j, _ := json.Marshal(obj)
	return decodeJSON(j, dst)
}

// normalizeUserCode accepts any case, with or without separators.
func normalizeUserCode(s string) (string, bool) {
	n := normalizeCode(s)
	if len(n) != userCodeLen || strings.Trim(n, userCodeAlphabet) != "" {
		return "", false
	}
	return n, true
}

func (s *Server) publicBase(r *http.Request) string {
	if s.cfg.BaseURL != "" {
		return strings.TrimRight(s.cfg.BaseURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// handleDeviceCode is POST /api/auth/device-code.
func (d *deviceFeature) handleDeviceCode(c *Ctx) error {
	var req DeviceCodeRequest
	if err := bindFormOrJSON(c, &req); err != nil {
		return err
	}
	if ok, retry := d.start.Allow(c.ClientIP()); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	name := strings.TrimSpace(req.ClientName)
	if name == "" {
		name = strings.TrimSpace(req.ClientID)
	}
	if name == "" {
		name = "command-line client"
	}
	deviceCode := auth.RandomToken(32)
	g := &store.DeviceGrant{DeviceCodeHash: auth.HashToken(deviceCode), ClientName: name, IP: c.ClientIP(),
		UserAgent: truncate(c.R.UserAgent(), 256), Interval: deviceInterval, ExpiresAt: d.s.Now().Add(deviceCodeTTL)}
	var err error
	for range 5 {
		g.UserCode = randomCode(userCodeAlphabet, userCodeLen)
		if err = d.s.db.CreateDeviceGrant(c.Context(), g); store.ErrorCode(err) != store.EConflict {
			break
		}
	}
	if err != nil {
		return err
	}
	shown := g.UserCode[:4] + "-" + g.UserCode[4:]
	uri := d.s.publicBase(c.R) + cliGrantPath
	c.W.Header().Set("Cache-Control", "no-store")
	return c.JSON(200, DeviceCodeResponse{DeviceCode: deviceCode, UserCode: shown, VerificationURI: uri,
		VerificationURIComplete: uri + "?user_code=" + shown, ExpiresIn: int(deviceCodeTTL / time.Second), Interval: deviceInterval})
}

func deviceError(c *Ctx, code, desc string) error {
	c.W.Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusBadRequest, DeviceTokenError{Error: code, ErrorDescription: desc})
}

// handleDeviceToken is POST /api/auth/device-token. Each poll is stamped; one
// that comes sooner than 3/4 of the interval after the previous gets
// slow_down and raises the interval by 5 seconds (RFC 8628 section 3.5). An
// approved grant yields a "cli" login session exactly once.
func (d *deviceFeature) handleDeviceToken(c *Ctx) error {
	var req DeviceTokenRequest
	if err := bindFormOrJSON(c, &req); err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			return deviceError(c, "invalid_request", ve.Error())
		}
		return err
	}
	if req.GrantType != "" && req.GrantType != deviceGrantType {
		return deviceError(c, "unsupported_grant_type", "grant_type must be "+deviceGrantType)
	}
	ctx := c.Context()
	login, refresh := d.s.newLogin(c.R, "cli")
	poll, err := d.s.db.RedeemDeviceGrant(ctx, auth.HashToken(req.DeviceCode), login)
	if store.ErrorCode(err) == store.EConflict {
		return deviceError(c, "invalid_grant", "this device_code was already used")
	}
	if err != nil {
		return err
	}
	if poll.Outcome != store.PollIssued {
		o := pollErrors[poll.Outcome]
		return deviceError(c, o[0], o[1])
	}
	tokens, err := d.s.issueLogin(login, refresh, poll.OrgID, poll.Now)
	if err != nil {
		return err
	}
	e := c.auditEvent("auth.login", "success", "session", tokens.claims.Session, map[string]any{"kind": "cli"})
	e.ActorUserID, e.OrgID = tokens.claims.Subject, tokens.claims.Org
	d.s.audit(ctx, e)
	c.W.Header().Set("Cache-Control", "no-store")
	return c.JSON(200, DeviceTokenSuccess{AccessToken: tokens.access, TokenType: "bearer", ExpiresIn: int(accessTTL / time.Second), RefreshToken: tokens.refresh})
}

// pollErrors are the RFC 8628 error and description of each poll outcome
// that issues no token.
var pollErrors = map[string][2]string{
	store.PollUnknown:  {"invalid_grant", "unknown device_code"},
	store.PollExpired:  {"expired_token", "the code expired; run the sign-in again"},
	store.PollConsumed: {"invalid_grant", "this device_code was already used"},
	store.PollDenied:   {"access_denied", "the sign-in was refused"},
	store.PollPending:  {"authorization_pending", "waiting for approval in the browser"},
	store.PollSlowDown: {"slow_down", "polling too fast"},
	store.PollUserGone: {"access_denied", "the approving account is gone"},
}

// guess counts one user-code lookup against the caller's limits.
func (d *deviceFeature) guess(c *Ctx) error {
	if ok, retry := d.guessIP.Allow(c.ClientIP()); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	if ok, retry := d.guessUser.Allow(c.ID.UserID); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	return nil
}

// handleGrantInfo is GET /api/auth/cli-grant/info.
func (d *deviceFeature) handleGrantInfo(c *Ctx) error {
	var q CliGrantInfoQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	if err := d.guess(c); err != nil {
		return err
	}
	code, ok := normalizeUserCode(q.UserCode)
	if !ok {
		return store.NotFound("sign-in request")
	}
	g, err := d.s.db.FindDeviceGrantByUserCode(c.Context(), code)
	if store.IsNotFound(err) {
		return store.NotFound("sign-in request")
	}
	if err != nil {
		return err
	}
	return c.JSON(200, CliGrantInfoResponse{UserCode: code[:4] + "-" + code[4:], ClientName: g.ClientName, IP: g.IP, UserAgent: g.UserAgent,
		Status: g.Status, CreatedAt: g.CreatedAt, ExpiresAt: g.ExpiresAt})
}

// handleGrantRedeem is POST /api/auth/cli-grant/redeem: the CLI will act as
// the caller, in the caller's current organization, with the caller's role.
func (d *deviceFeature) handleGrantRedeem(c *Ctx) error {
	var req CliGrantRedeemRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	return d.decide(c, req.UserCode, true)
}

// handleGrantDeny is POST /api/auth/cli-grant/deny.
func (d *deviceFeature) handleGrantDeny(c *Ctx) error {
	var req CliGrantDenyRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	return d.decide(c, req.UserCode, false)
}

func (d *deviceFeature) decide(c *Ctx, userCode string, approve bool) error {
	if err := d.guess(c); err != nil {
		return err
	}
	code, ok := normalizeUserCode(userCode)
	if !ok {
		return store.NotFound("sign-in request")
	}
	if err := d.s.db.DecideDeviceGrant(c.Context(), code, approve, c.ID.UserID, c.ID.OrgID); err != nil {
		if store.IsNotFound(err) {
			return store.NotFound("sign-in request")
		}
		return err
	}
	action := "auth.cli_grant_redeemed"
	if !approve {
		action = "auth.cli_grant_denied"
	}
	c.Audit(action, "success", "device_grant", code[:4]+"-"+code[4:], nil)
	return c.NoContent()
}
