package server

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/tools"
	"github.com/opsagent/opsagent/store"
	"github.com/opsagent/opsagent/vault"
)

// Integrations are the monitoring systems (Prometheus, Alertmanager, Loki,
// Grafana) a project's agent queries with read-only tools. Credentials are
// project or org secrets named here, resolved only when a tool calls. The
// HTTP allow-list says which private addresses http_request may reach.

// IntegrationOut is one integration; never its credential.
type IntegrationOut struct {
	ID         string    `json:"id"`
	Kind       string    `json:"kind"`
	Name       string    `json:"name"`
	BaseURL    string    `json:"base_url"`
	AuthScheme string    `json:"auth_scheme" doc:"none, bearer (the secret is the token) or basic (the secret is user:password)"`
	AuthSecret string    `json:"auth_secret" doc:"name of the project or org secret holding the credential"`
	OrgHeader  string    `json:"org_header" doc:"tenant sent as X-Scope-OrgID (Loki, Mimir) or X-Grafana-Org-Id (Grafana)"`
	Enabled    bool      `json:"enabled"`
	Tools      []string  `json:"tools" doc:"the agent tools this integration provides"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// IntegrationListOut lists a project's integrations.
type IntegrationListOut struct {
	Items []IntegrationOut `json:"items"`
	Total int              `json:"total"`
}

// IntegrationCreate configures an integration.
type IntegrationCreate struct {
	Kind       string `json:"kind" validate:"required,oneof=prometheus alertmanager grafana loki"`
	Name       string `json:"name" validate:"required,min=1,max=64,pattern=^[a-z0-9][a-z0-9._-]{0,63}$"`
	BaseURL    string `json:"base_url" validate:"required,min=8,max=2048"`
	AuthScheme string `json:"auth_scheme" validate:"oneof=none bearer basic"`
	AuthSecret string `json:"auth_secret" validate:"max=64"`
	OrgHeader  string `json:"org_header" validate:"max=256"`
	Enabled    *bool  `json:"enabled"`
}

// IntegrationUpdate edits an integration; absent fields stay.
type IntegrationUpdate struct {
	Name       *string `json:"name" validate:"nonnull,min=1,max=64,pattern=^[a-z0-9][a-z0-9._-]{0,63}$"`
	BaseURL    *string `json:"base_url" validate:"nonnull,min=8,max=2048"`
	AuthScheme *string `json:"auth_scheme" validate:"nonnull,oneof=none bearer basic"`
	AuthSecret *string `json:"auth_secret" validate:"nonnull,max=64"`
	OrgHeader  *string `json:"org_header" validate:"nonnull,max=256"`
	Enabled    *bool   `json:"enabled" validate:"nonnull"`
}

// HTTPAllowlist is the private addresses a project's http_request may reach.
type HTTPAllowlist struct {
	Entries []string `json:"entries" validate:"max=100" doc:"CIDRs (10.0.0.0/8), addresses or host names"`
}

// integrationRoutes: integrations and the http_request allow-list.
func (s *Server) integrationRoutes() []*Route {
	tags := []string{"integrations"}
	return []*Route{
		{Method: "GET", Path: "/api/integrations", Summary: "List the project's monitoring integrations", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Project: true, Resp: IntegrationListOut{}, Status: 200, MCP: true, Handle: s.handleListIntegrations},
		{Method: "POST", Path: "/api/integrations", Summary: "Add a monitoring integration", Tags: tags, Auth: AuthAny, Perm: PermProjectAdmin, Project: true, Body: IntegrationCreate{}, Resp: IntegrationOut{}, Status: 201, MaxBody: 16 << 10, Handle: s.handleCreateIntegration},
		{Method: "GET", Path: "/api/integrations/{integration_id}", Summary: "Read an integration", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Project: true, Resp: IntegrationOut{}, Status: 200, Handle: s.handleGetIntegration},
		{Method: "PATCH", Path: "/api/integrations/{integration_id}", Summary: "Edit an integration", Tags: tags, Auth: AuthAny, Perm: PermProjectAdmin, Project: true, Body: IntegrationUpdate{}, Resp: IntegrationOut{}, Status: 200, MaxBody: 16 << 10, Handle: s.handleUpdateIntegration},
		{Method: "DELETE", Path: "/api/integrations/{integration_id}", Summary: "Remove an integration", Tags: tags, Auth: AuthAny, Perm: PermProjectAdmin, Project: true, Status: 204, Handle: s.handleDeleteIntegration},
		{Method: "GET", Path: "/api/http-allowlist", Summary: "Private addresses the agent's http_request may reach", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Project: true, Resp: HTTPAllowlist{}, Status: 200, Handle: s.handleGetHTTPAllowlist},
		{Method: "PUT", Path: "/api/http-allowlist", Summary: "Replace the http_request allow-list", Tags: tags, Auth: AuthAny, Perm: PermRulesWrite, Project: true, Body: HTTPAllowlist{}, Resp: HTTPAllowlist{}, Status: 200, MaxBody: 16 << 10, Handle: s.handlePutHTTPAllowlist},
	}
}

func integrationOut(x *store.Integration) IntegrationOut {
	return IntegrationOut{ID: x.ID, Kind: x.Kind, Name: x.Name, BaseURL: x.BaseURL, AuthScheme: x.AuthScheme,
		AuthSecret: x.AuthSecret, OrgHeader: x.OrgHeader, Enabled: x.Enabled, Tools: tools.IntegrationToolNames(x.Kind),
		CreatedAt: x.CreatedAt, UpdatedAt: x.UpdatedAt}
}

// checkIntegration validates what the struct tags cannot.
func checkIntegration(x *store.Integration) error {
	u, err := url.Parse(x.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return invalid("base_url must be an http(s) URL without credentials, query or fragment", "value_error", "body", "base_url")
	}
	if err := tools.CheckURL(u); err != nil {
		return invalid(err.Error(), "value_error", "body", "base_url")
	}
	if x.AuthScheme == "" {
		x.AuthScheme = "none"
	}
	switch {
	case x.AuthScheme == "none" && x.AuthSecret != "":
		return invalid("auth_secret needs auth_scheme bearer or basic", "value_error", "body", "auth_secret")
	case x.AuthScheme != "none":
		if err := vault.ValidateName(x.AuthSecret); err != nil {
			return invalid("auth_secret must name a secret: "+err.Error(), "value_error", "body", "auth_secret")
		}
	}
	if strings.ContainsAny(x.OrgHeader, "\r\n") {
		return invalid("org_header must be one line", "value_error", "body", "org_header")
	}
	return nil
}

// handleListIntegrations is GET /api/integrations.
func (s *Server) handleListIntegrations(c *Ctx) error {
	xs, err := s.db.FindIntegrations(c.Context(), c.OrgID(), c.ProjectID())
	if err != nil {
		return err
	}
	out := IntegrationListOut{Items: make([]IntegrationOut, 0, len(xs)), Total: len(xs)}
	for i := range xs {
		out.Items = append(out.Items, integrationOut(&xs[i]))
	}
	return c.JSON(200, out)
}

// handleCreateIntegration is POST /api/integrations.
func (s *Server) handleCreateIntegration(c *Ctx) error {
	var req IntegrationCreate
	if err := c.Bind(&req); err != nil {
		return err
	}
	x := &store.Integration{OrgID: c.OrgID(), ProjectID: c.ProjectID(), Kind: req.Kind, Name: req.Name,
		BaseURL: strings.TrimSuffix(req.BaseURL, "/"), AuthScheme: req.AuthScheme, AuthSecret: req.AuthSecret,
		OrgHeader: req.OrgHeader, Enabled: req.Enabled == nil || *req.Enabled, CreatedBy: c.ID.UserID}
	if err := checkIntegration(x); err != nil {
		return err
	}
	if err := s.db.CreateIntegration(c.Context(), x); err != nil {
		return err
	}
	c.Audit("integration.created", "success", "integration", x.ID, map[string]any{"kind": x.Kind, "name": x.Name})
	return c.JSON(201, integrationOut(x))
}

// handleGetIntegration is GET /api/integrations/{integration_id}.
func (s *Server) handleGetIntegration(c *Ctx) error {
	id, err := c.IDParam("integration_id")
	if err != nil {
		return err
	}
	x, err := s.db.FindIntegration(c.Context(), c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	return c.JSON(200, integrationOut(x))
}

// handleUpdateIntegration is PATCH /api/integrations/{integration_id}.
func (s *Server) handleUpdateIntegration(c *Ctx) error {
	id, err := c.IDParam("integration_id")
	if err != nil {
		return err
	}
	var req IntegrationUpdate
	if err := c.Bind(&req); err != nil {
		return err
	}
	x, err := s.db.FindIntegration(c.Context(), c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	setPtr(&x.Name, req.Name)
	setPtr(&x.BaseURL, req.BaseURL)
	setPtr(&x.AuthScheme, req.AuthScheme)
	setPtr(&x.AuthSecret, req.AuthSecret)
	setPtr(&x.OrgHeader, req.OrgHeader)
	setPtr(&x.Enabled, req.Enabled)
	x.BaseURL = strings.TrimSuffix(x.BaseURL, "/")
	if err := checkIntegration(x); err != nil {
		return err
	}
	if err := s.db.UpdateIntegration(c.Context(), x); err != nil {
		return err
	}
	c.Audit("integration.updated", "success", "integration", x.ID, map[string]any{"kind": x.Kind, "name": x.Name})
	return c.JSON(200, integrationOut(x))
}

func setPtr[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// handleDeleteIntegration is DELETE /api/integrations/{integration_id}.
func (s *Server) handleDeleteIntegration(c *Ctx) error {
	id, err := c.IDParam("integration_id")
	if err != nil {
		return err
	}
	if err := s.db.DeleteIntegration(c.Context(), c.OrgID(), c.ProjectID(), id); err != nil {
		return err
	}
	c.Audit("integration.deleted", "success", "integration", id, nil)
	return c.NoContent()
}

// handleGetHTTPAllowlist is GET /api/http-allowlist.
func (s *Server) handleGetHTTPAllowlist(c *Ctx) error {
	entries, err := s.db.FindHTTPAllowlist(c.Context(), c.OrgID(), c.ProjectID())
	if err != nil {
		return err
	}
	return c.JSON(200, HTTPAllowlist{Entries: entries})
}

// handlePutHTTPAllowlist is PUT /api/http-allowlist.
func (s *Server) handlePutHTTPAllowlist(c *Ctx) error {
	var req HTTPAllowlist
	if err := c.Bind(&req); err != nil {
		return err
	}
	if req.Entries == nil {
		req.Entries = []string{}
	}
	for i, e := range req.Entries {
		if _, _, err := tools.ParseAllowlist([]string{e}); err != nil {
			return invalid(err.Error(), "value_error", "body", "entries", i)
		}
	}
	if err := s.db.PutHTTPAllowlist(c.Context(), c.OrgID(), c.ProjectID(), c.ID.UserID, req.Entries); err != nil {
		return err
	}
	c.Audit("http_allowlist.updated", "success", "project", c.ProjectID(), map[string]any{"entries": req.Entries})
	return c.JSON(200, req)
}

// httpEgress is the guard of a project's http_request: public addresses
// plus its allow-list. An unreadable allow-list allows nothing private.
func (s *Server) httpEgress(ctx context.Context, orgID, projectID string) *tools.Egress {
	entries, err := s.db.FindHTTPAllowlist(ctx, orgID, projectID)
	if err != nil {
		s.log.Warn("policy: http allow-list unreadable; only public addresses", "project_id", projectID, "err", err)
		return &tools.Egress{}
	}
	prefixes, hosts, err := tools.ParseAllowlist(entries)
	if err != nil {
		return &tools.Egress{}
	}
	return &tools.Egress{Allow: prefixes, AllowHosts: hosts}
}

// integrationEgress reaches what admins configured, private networks
// included, but never link-local (cloud metadata) or multicast.
func integrationEgress() *tools.Egress {
	return &tools.Egress{AllowPrivate: true, Allow: []netip.Prefix{}}
}

// integrationEndpoint resolves the integration a query tool names, with
// its credential read from the vault for this one call.
func (s *Server) integrationEndpoint(ctx context.Context, orgID, projectID, kind, name string) (*tools.Endpoint, error) {
	xs, err := s.db.FindIntegrations(ctx, orgID, projectID)
	if err != nil {
		return nil, fmt.Errorf("integrations unreadable")
	}
	var found []store.Integration
	var names []string
	for _, x := range xs {
		if x.Kind != kind || !x.Enabled {
			continue
		}
		names = append(names, x.Name)
		if name == "" || x.Name == name {
			found = append(found, x)
		}
	}
	switch {
	case len(found) == 0 && name != "":
		return nil, fmt.Errorf("no %s integration named %q; the project has: %s", kind, name, strings.Join(names, ", "))
	case len(found) == 0:
		return nil, fmt.Errorf("the project has no %s integration", kind)
	case len(found) > 1:
		return nil, fmt.Errorf("the project has several %s integrations (%s): name one in \"integration\"", kind, strings.Join(names, ", "))
	}
	x := found[0]
	ep := &tools.Endpoint{Kind: x.Kind, Name: x.Name, BaseURL: x.BaseURL, Header: http.Header{}}
	if x.AuthScheme != "none" && x.AuthSecret != "" {
		vals, err := s.secrets.Resolve(ctx, orgID, projectID, x.AuthSecret)
		if err != nil {
			return nil, fmt.Errorf("the credential of %s could not be read", x.Name)
		}
		v, ok := vals[x.AuthSecret]
		if !ok {
			return nil, fmt.Errorf("the secret %s that %s authenticates with does not exist", x.AuthSecret, x.Name)
		}
		if x.AuthScheme == "basic" {
			v = "Basic " + base64.StdEncoding.EncodeToString([]byte(v))
		} else {
			v = "Bearer " + v
		}
		ep.Header.Set("Authorization", v)
	}
	if x.OrgHeader != "" {
		h := "X-Scope-OrgID"
		if x.Kind == store.IntegrationGrafana {
			h = "X-Grafana-Org-Id"
		}
		ep.Header.Set(h, x.OrgHeader)
	}
	return ep, nil
}
