package server

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/opsagent/opsagent/store"
)

// IntegrationCheckOut is the result of reaching an integration's health
// endpoint with its stored credential.
type IntegrationCheckOut struct {
	OK        bool   `json:"ok"`
	URL       string `json:"url"`
	Status    int    `json:"status"`
	LatencyMS int64  `json:"latency_ms"`
	Detail    string `json:"detail"`
}

// integrationHealthPath is each kind's unauthenticated-or-cheap readiness
// endpoint.
var integrationHealthPath = map[string]string{
	store.IntegrationPrometheus:   "/-/ready",
	store.IntegrationAlertmanager: "/-/ready",
	store.IntegrationLoki:         "/ready",
	store.IntegrationGrafana:      "/api/health",
}

// integrationCheckRoutes: the settings page's "test" button.
func (s *Server) integrationCheckRoutes() []*Route {
	return []*Route{
		{Method: "POST", Path: "/api/integrations/{integration_id}/test", Summary: "Reach the integration's health endpoint with its credential, through the same egress guard as the agent's tools",
			Tags: []string{"integrations"}, Auth: AuthAny, Perm: PermProjectAdmin, Project: true, Resp: IntegrationCheckOut{}, Status: 200, Handle: s.handleCheckIntegration},
	}
}

// handleCheckIntegration is POST /api/integrations/{integration_id}/test.
// Failing to reach it is an answer (ok false with the reason), not an error.
func (s *Server) handleCheckIntegration(c *Ctx) error {
	id, err := c.IDParam("integration_id")
	if err != nil {
		return err
	}
	x, err := s.db.FindIntegration(c.Context(), c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	if !x.Enabled {
		return &store.Error{Code: store.EConflict, Message: "the integration is disabled; enable it first", Reason: "integration_disabled"}
	}
	ep, err := s.integrationEndpoint(c.Context(), c.OrgID(), c.ProjectID(), x.Kind, x.Name)
	if err != nil {
		return c.JSON(200, IntegrationCheckOut{Detail: err.Error()})
	}
	u, err := url.Parse(strings.TrimSuffix(ep.BaseURL, "/") + integrationHealthPath[x.Kind])
	if err != nil {
		return c.JSON(200, IntegrationCheckOut{Detail: "the base URL does not parse"})
	}
	out := IntegrationCheckOut{URL: u.Redacted()}
	req, err := http.NewRequestWithContext(c.Context(), http.MethodGet, u.String(), nil)
	if err != nil {
		out.Detail = err.Error()
		return c.JSON(200, out)
	}
	for k, vs := range ep.Header {
		req.Header[k] = vs
	}
	start := time.Now()
	resp, err := integrationEgress().Client(5 * time.Second).Do(req)
	out.LatencyMS = time.Since(start).Milliseconds()
	if err != nil {
		out.Detail = "unreachable: " + err.Error()
		return c.JSON(200, out)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
	out.Status = resp.StatusCode
	out.OK = resp.StatusCode/100 == 2
	out.Detail = resp.Status + ": " + strings.TrimSpace(string(body))
	return c.JSON(200, out)
}
