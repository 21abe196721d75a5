package server

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/opsagent/opsagent/store"
)

// opsTag marks the operations routes: unauthenticated, at the root
// (CONVENTIONS.md), logged at debug level because probes and scrapes come
// every few seconds.
const opsTag = "operations"

func (s *Server) opsRoutes() []*Route {
	tags := []string{opsTag}
	return []*Route{
		{Method: http.MethodGet, Path: "/healthz", Summary: "Liveness: the process serves HTTP (no dependency checked)", Tags: tags,
			Auth: AuthNone, Resp: HealthOut{}, Status: 200, Handle: s.handleHealthz},
		{Method: http.MethodGet, Path: "/readyz", Summary: "Readiness: database writable, disk above the minimum, RAG index open, scheduler ticking, vault unlocked; 503 names the failing checks", Tags: tags,
			Auth: AuthNone, Resp: ReadyOut{}, Status: 200, ErrorResp: map[int]any{503: ReadyOut{}}, Handle: s.handleReadyz},
		{Method: http.MethodGet, Path: "/metrics", Summary: "Prometheus metrics; loopback only unless --metrics-token is set, then that bearer token is required", Tags: tags,
			Auth: AuthNone, Status: 200, Handle: s.handleMetrics},
	}
}

func (s *Server) handleHealthz(c *Ctx) error {
	c.W.Header().Set("Cache-Control", "no-store")
	writeJSON(c.W, http.StatusOK, HealthOut{Status: "ok", Version: Version, UptimeSeconds: time.Since(s.started).Seconds()})
	return nil
}

func (s *Server) handleReadyz(c *Ctx) error {
	out := s.readyz(c.Context())
	c.W.Header().Set("Cache-Control", "no-store")
	status := http.StatusOK
	if out.Status != "ready" {
		status = http.StatusServiceUnavailable
	}
	writeJSON(c.W, status, out)
	return nil
}

// handleMetrics serves the registry to a caller with the metrics token, or,
// when no token is set, to a loopback peer that came directly (a reverse
// proxy on the same host adds forwarding headers, and its clients are not
// local).
func (s *Server) handleMetrics(c *Ctx) error {
	if tok := s.cfg.MetricsToken; tok != "" {
		got, ok := strings.CutPrefix(c.R.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(tok)) != 1 {
			return &store.Error{Code: store.EUnauthorized, Message: "metrics need the bearer token set with --metrics-token", Reason: "metrics_token"}
		}
	} else if !directLoopback(c.R) {
		return &store.Error{Code: store.EForbidden, Message: "metrics are served to loopback only; set --metrics-token (OPSAGENT_METRICS_TOKEN) to scrape from elsewhere", Reason: "metrics_loopback_only"}
	}
	s.metrics.handler().ServeHTTP(c.W, c.R)
	return nil
}

func directLoopback(r *http.Request) bool {
	for _, h := range []string{"X-Forwarded-For", "Forwarded", "X-Real-Ip"} {
		if r.Header.Get(h) != "" {
			return false
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
