package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/opsagent/opsagent/server/auth"
	"github.com/opsagent/opsagent/store"
)

const (
	accessCookie  = "svc_access_token"
	refreshCookie = "svc_refresh_token"
	accessTTL     = 15 * time.Minute
)

// buildHandler assembles the router and the handlers that sit outside it.
func (s *Server) buildHandler() http.Handler {
	rt := buildRouter(s.routes, s.wrap)
	rt.NotFound = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/api/") && r.Method == http.MethodGet {
			s.serveConsole(w, r)
			return
		}
		writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Not Found"})
	})
	rt.MethodNotAllowed = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"detail": "Method Not Allowed"})
	})
	return rt
}

// statusRecorder remembers the status for the access log and passes Flush
// through so server-sent events work.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// wrap turns a route into a handler: request id, access log, panic recovery,
// body cap, authentication, cross-origin check, permission and project
// resolution: the guards live here once, not in each handler.
func (s *Server) wrap(rt *Route) routeHandler {
	obs := s.metrics.forRoute(rt)
	if s.cfg.DisableHTTPMetrics {
		obs = nil
	}
	logLevel := slog.LevelInfo
	if slices.Contains(rt.Tags, opsTag) {
		logLevel = slog.LevelDebug // probes and scrapes every few seconds would drown the log
	}
	return func(w http.ResponseWriter, r *http.Request, params []param) {
		start := time.Now()
		// The canonical spelling: Get and Set would canonicalize
		// "X-Request-ID" into a new string on every request.
		rid := r.Header.Get("X-Request-Id")
		if rid == "" || len(rid) > 64 {
			rid = store.NewID()
		}
		w.Header()["X-Request-Id"] = []string{rid}
		st := &reqState{rid: rid, log: s.log, params: params}
		ctx := context.WithValue(r.Context(), requestIDKey, st)
		if isStream(r) {
			if obs != nil {
				defer obs.streamOpened()()
			}
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer cancel()
			defer context.AfterFunc(s.stopping, cancel)()
		}
		r = r.WithContext(ctx)
		rec := &st.rec
		rec.ResponseWriter = w
		st.c = Ctx{W: rec, R: r, Route: rt, srv: s}
		c := &st.c
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				writeError(rec, r, fmt.Errorf("panic: %v", p))
			}
			took := time.Since(start)
			if obs != nil {
				obs.observe(rec.status, took)
			}
			if !s.log.Enabled(ctx, logLevel) {
				return
			}
			line := accessLine{requestID: rid, method: r.Method, route: rt.Path, status: rec.status,
				durationMS: float64(took.Microseconds()) / 1000, bytes: rec.bytes, ip: s.clientIP(r)}
			if c.ID != nil {
				line.hasUser, line.userID, line.orgID, line.keyID = true, c.ID.UserID, c.ID.OrgID, c.ID.KeyID
			}
			if c.Project != nil {
				line.projectID = c.Project.ID
			}
			logAccess(ctx, s.log, logLevel, &line)
		}()
		if err := s.serveRoute(c); err != nil {
			writeError(rec, c.R, err)
		}
	}
}

// reqState is what wrap keeps of one request, in one allocation: its id,
// the path parameters, the audit mark (auditUnsafe), the status recorder
// and the handler's Ctx.
// The request's logger is made from it only when a handler logs
// (loggerFrom): most requests log nothing but the access line.
type reqState struct {
	rid     string
	log     *slog.Logger // the server's; loggerFrom adds request_id
	params  []param
	audited atomic.Bool
	rec     statusRecorder
	c       Ctx
}

func stateFrom(ctx context.Context) *reqState {
	st, _ := ctx.Value(requestIDKey).(*reqState)
	return st
}

func (s *Server) serveRoute(c *Ctx) error {
	rt, r := c.Route, c.R
	limit := rt.MaxBody
	if limit == 0 {
		limit = s.cfg.MaxBodyBytes
	}
	if r.ContentLength > limit {
		return &http.MaxBytesError{Limit: limit}
	}
	if r.ContentLength < 0 {
		// Without a Content-Length (chunked) the cap is ours to enforce;
		// with one, net/http already ends the body there, within the limit.
		r.Body = http.MaxBytesReader(c.W, r.Body, limit)
	}
	// A browser attaches our cookies to requests other sites make it send, so
	// an unsafe request whose credential may be a cookie (no Authorization
	// header) must come from our own origin. This covers the token-exempt
	// routes that read the refresh cookie (refresh, logout) as well.
	if r.Header.Get("Authorization") == "" && hasAuthCookie(r) {
		if err := s.cop.Check(r); err != nil {
			return &store.Error{Code: store.EForbidden, Message: "cross-origin request refused", Reason: "cross_origin"}
		}
	}
	if rt.Auth != AuthNone {
		id, _, err := s.authenticate(r)
		if err != nil {
			return err
		}
		c.ID = id
		c.R = r.WithContext(context.WithValue(r.Context(), identityKey, id))
		if rt.Auth == AuthHuman && !id.Human() {
			return &store.Error{Code: store.EForbidden, Message: "API keys cannot call this route; sign in as a person", Reason: "human_only"}
		}
		if rt.RecentAuth {
			if err := s.requireRecentAuth(c); err != nil {
				return err
			}
		}
		if err := s.authorize(c); err != nil {
			return err
		}
		if err := s.billingWritable(c); err != nil {
			return err
		}
	}
	if rt.Project {
		p, err := s.resolveProject(c)
		if err != nil {
			return err
		}
		c.Project = p
	}
	return rt.Handle(c)
}

// resolveProject reads X-Project-ID and returns the project if the caller may see it.
func (s *Server) resolveProject(c *Ctx) (*store.Project, error) {
	raw := strings.TrimSpace(c.R.Header.Get("X-Project-ID"))
	if raw == "" {
		return nil, invalid("Field required", "missing", "header", "x-project-id")
	}
	if !store.ValidID(raw) {
		return nil, invalid("Input should be a valid UUID", "uuid_parsing", "header", "x-project-id")
	}
	return s.projectFor(c, raw)
}

func hasAuthCookie(r *http.Request) bool {
	for _, name := range []string{accessCookie, refreshCookie} {
		if _, err := r.Cookie(name); err == nil {
			return true
		}
	}
	return false
}

// bearer extracts the credential: Authorization header first, then the access cookie.
func bearer(r *http.Request) (token string, viaCookie bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
			return strings.TrimSpace(h[7:]), false
		}
		return "", false
	}
	if ck, err := r.Cookie(accessCookie); err == nil {
		return ck.Value, true
	}
	return "", false
}

// authenticate checks the credential on every request: signature and type,
// the jti blocklist, the login session, the user's revocation epoch and the
// current role, so revocations and demotions apply from the next request.
func (s *Server) authenticate(r *http.Request) (*Identity, bool, error) {
	tok, viaCookie := bearer(r)
	if tok == "" {
		return nil, false, unauthorized("Not authenticated")
	}
	if strings.HasPrefix(tok, "opsk_") {
		id, err := s.authenticateKey(r, tok)
		return id, false, err
	}
	claims, err := s.signer.Verify(tok, auth.TypeAccess)
	if err != nil {
		return nil, false, unauthorized("Invalid or expired token")
	}
	id, err := s.identityFromClaims(r.Context(), claims)
	return id, viaCookie, err
}

func (s *Server) identityFromClaims(ctx context.Context, claims *auth.Claims) (*Identity, error) {
	if s.revoked.has(claims.ID) {
		return nil, unauthorized("Token has been revoked")
	}
	p, err := s.db.FindPrincipal(ctx, claims.Subject, claims.Session, claims.Org)
	if store.IsNotFound(err) {
		return nil, unauthorized("Invalid or expired token")
	}
	if err != nil {
		return nil, err
	}
	if p.SessionRevoked || !p.SessionExpires.After(s.Now()) {
		return nil, unauthorized("Session has ended; sign in again")
	}
	// iat travels as a float of seconds that golang-jwt truncates to the
	// microsecond on parsing, so it can read one microsecond early: without
	// that allowance a token minted in the epoch's own microsecond is vetoed.
	if claims.IssuedAt == nil || claims.IssuedAt.Time.Add(time.Microsecond).Before(p.TokensValidAfter) {
		return nil, unauthorized("Token has been revoked")
	}
	if p.Role == "" {
		return nil, &store.Error{Code: store.EUnauthorized, Message: "You are no longer a member of this organization; refresh your session", Reason: "org_membership_ended"}
	}
	return &Identity{UserID: p.UserID, Email: p.Email, OrgID: claims.Org, Role: p.Role, SessionID: claims.Session, JTI: claims.ID}, nil
}

// clientIP is the peer address or, behind a trusted proxy, the last
// X-Forwarded-For hop: the one that proxy appended. Earlier hops are whatever
// the client chose to send, so trusting the first would let anyone pick a
// fresh address per request and walk past the per-IP limits.
func (s *Server) clientIP(r *http.Request) string {
	if s.cfg.TrustProxy {
		if vals := r.Header.Values("X-Forwarded-For"); len(vals) > 0 {
			hops := strings.Split(vals[len(vals)-1], ",")
			if ip := net.ParseIP(strings.TrimSpace(hops[len(hops)-1])); ip != nil {
				return ip.String()
			}
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// Bind decodes and validates the JSON body into dst.
func (c *Ctx) Bind(dst any) error {
	ct := c.R.Header.Get("Content-Type")
	if ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		return invalid("Content-Type must be application/json", "content_type", "header", "content-type")
	}
	err := decodeBody(c.R.Body, dst)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return mbe
	}
	return err
}

// BindQuery parses the query into dst (see bindQuery).
func (c *Ctx) BindQuery(dst any) error { return bindQuery(c.R.URL.Query(), dst) }

// ClientIP is the caller's address.
func (c *Ctx) ClientIP() string { return c.srv.clientIP(c.R) }
