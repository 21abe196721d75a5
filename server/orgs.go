package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/opsagent/opsagent/store"
)

// OrganizationOut is an org as its members see it.
type OrganizationOut struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Slug      string         `json:"slug"`
	Personal  bool           `json:"personal"`
	Branding  map[string]any `json:"branding"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

// OrgWithRoleOut is an org the caller belongs to, with the caller's role.
type OrgWithRoleOut struct {
	OrganizationOut
	Role    string `json:"role"`
	Current bool   `json:"current"`
}

// OrganizationCreate creates an org with the caller as its owner.
type OrganizationCreate struct {
	Name string `json:"name" validate:"required,min=1,max=120"`
}

// OrganizationUpdate renames an org.
type OrganizationUpdate struct {
	Name *string `json:"name,omitempty" validate:"nonnull,min=1,max=120"`
}

// OrganizationBrandingUpdate is cosmetic only; an absent field is kept, an
// empty string clears it.
type OrganizationBrandingUpdate struct {
	DisplayName  *string `json:"display_name,omitempty" validate:"max=120"`
	LogoURL      *string `json:"logo_url,omitempty" validate:"max=2048,pattern=^((https://|/)[^\\s]*)?$"`
	PrimaryColor *string `json:"primary_color,omitempty" validate:"pattern=^(#[0-9a-fA-F]{6})?$"`
	AccentColor  *string `json:"accent_color,omitempty" validate:"pattern=^(#[0-9a-fA-F]{6})?$"`
}

func orgOut(o *store.Organization) OrganizationOut {
	out := OrganizationOut{ID: o.ID, Name: o.Name, Slug: o.Slug, Personal: o.Personal, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt, Branding: map[string]any{}}
	_ = json.Unmarshal([]byte(o.Branding), &out.Branding)
	return out
}

func (s *Server) orgRoutes() []*Route {
	tags := []string{"organizations"}
	return []*Route{
		{Method: "GET", Path: "/api/organizations", Summary: "Organizations I belong to (a key: its own)", Tags: tags, Auth: AuthAny, Resp: []OrganizationOut{}, Status: 200, Handle: s.handleListOrgs},
		{Method: "POST", Path: "/api/organizations", Summary: "Create an organization with me as its owner", Tags: tags, Auth: AuthHuman, Body: OrganizationCreate{}, Resp: OrganizationOut{}, Status: 201, MaxBody: 16 << 10, Handle: s.handleCreateOrg},
		{Method: "GET", Path: "/api/organizations/{org_id}", Summary: "One organization I belong to", Tags: tags, Auth: AuthAny, Perm: PermOrgRead, Resp: OrganizationOut{}, Status: 200, MCP: true, Handle: s.handleGetOrg},
		{Method: "PATCH", Path: "/api/organizations/{org_id}", Summary: "Rename an organization", Tags: tags, Auth: AuthAny, Perm: PermOrgWrite, Body: OrganizationUpdate{}, Resp: OrganizationOut{}, Status: 200, MaxBody: 16 << 10, Handle: s.handleUpdateOrg},
		{Method: "PATCH", Path: "/api/organizations/{org_id}/branding", Summary: "Update the organization's branding (cosmetic)", Tags: tags, Auth: AuthAny, Perm: PermOrgWrite, Body: OrganizationBrandingUpdate{}, Resp: OrganizationOut{}, Status: 200, MaxBody: 16 << 10, Handle: s.handleUpdateBranding},
	}
}

// handleListOrgs is GET /api/organizations.
func (s *Server) handleListOrgs(c *Ctx) error {
	orgs, err := s.db.FindOrgsForUser(c.Context(), c.ID.UserID)
	if err != nil {
		return err
	}
	out := []OrganizationOut{}
	for i := range orgs {
		if !c.ID.Human() && orgs[i].ID != c.ID.OrgID {
			continue
		}
		out = append(out, orgOut(&orgs[i].Organization))
	}
	return c.JSON(200, out)
}

// handleCreateOrg is POST /api/organizations. The caller's tokens keep acting
// in their current org; switch-org moves them.
func (s *Server) handleCreateOrg(c *Ctx) error {
	var req OrganizationCreate
	if err := c.Bind(&req); err != nil {
		return err
	}
	if err := trimNonBlank(&req.Name, "name"); err != nil {
		return err
	}
	o := &store.Organization{Name: req.Name}
	if err := s.db.CreateOrg(c.Context(), o, c.ID.UserID); err != nil {
		return err
	}
	e := c.auditEvent("org.created", "success", "organization", o.ID, map[string]any{"name": o.Name})
	e.OrgID = o.ID
	s.audit(c.Context(), e)
	return c.JSON(http.StatusCreated, orgOut(o))
}

// handleGetOrg is GET /api/organizations/{org_id}.
func (s *Server) handleGetOrg(c *Ctx) error {
	o, _, err := s.db.FindOrgByID(c.Context(), c.ID.UserID, c.OrgID())
	if err != nil {
		return err
	}
	return c.JSON(200, orgOut(o))
}

// handleUpdateOrg is PATCH /api/organizations/{org_id}.
func (s *Server) handleUpdateOrg(c *Ctx) error {
	var req OrganizationUpdate
	if err := c.Bind(&req); err != nil {
		return err
	}
	if err := trimNonBlank(req.Name, "name"); err != nil {
		return err
	}
	o, err := s.db.UpdateOrg(c.Context(), c.OrgID(), store.OrgPatch{Name: req.Name})
	if err != nil {
		return err
	}
	c.Audit("org.updated", "success", "organization", o.ID, map[string]any{"name": o.Name})
	return c.JSON(200, orgOut(o))
}

// handleUpdateBranding is PATCH /api/organizations/{org_id}/branding.
func (s *Server) handleUpdateBranding(c *Ctx) error {
	var req OrganizationBrandingUpdate
	if err := c.Bind(&req); err != nil {
		return err
	}
	raw := map[string]any{}
	set := func(key string, v *string) {
		switch {
		case v == nil:
		case strings.TrimSpace(*v) == "":
			raw[key] = nil // mergeJSON removes nil keys
		default:
			raw[key] = strings.TrimSpace(*v)
		}
	}
	set("display_name", req.DisplayName)
	set("logo_url", req.LogoURL)
	set("primary_color", req.PrimaryColor)
	set("accent_color", req.AccentColor)
	o, err := s.db.UpdateOrg(c.Context(), c.OrgID(), store.OrgPatch{Branding: raw})
	if err != nil {
		return err
	}
	c.Audit("org.branding_updated", "success", "organization", o.ID, nil)
	return c.JSON(200, orgOut(o))
}
