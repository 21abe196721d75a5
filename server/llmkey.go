package server

import (
	"net/url"
	"time"

	"github.com/opsagent/opsagent/server/secrets"
	"github.com/opsagent/opsagent/store"
)

// The org's own LLM credential lives in the vault (kind llm_key). Only an
// owner may set or clear it; members may see whether one is set and its
// non-secret fields. The key itself is never returned.

// LLMKeyPut sets the org's LLM credential.
type LLMKeyPut struct {
	Provider string `json:"provider" validate:"oneof=openai anthropic"`
	APIKey   string `json:"api_key" validate:"required,min=1,max=4096"`
	BaseURL  string `json:"base_url" validate:"max=2048"`
	Model    string `json:"model" validate:"max=200"`
}

// LLMKeyOut reports whether the org has its own LLM key, and its non-secret fields.
type LLMKeyOut struct {
	Configured bool       `json:"configured"`
	Provider   string     `json:"provider,omitempty"`
	BaseURL    string     `json:"base_url,omitempty"`
	Model      string     `json:"model,omitempty"`
	UpdatedBy  string     `json:"updated_by,omitempty"`
	UpdatedAt  *time.Time `json:"updated_at,omitempty"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
}

func (s *Server) llmKeyRoutes() []*Route {
	tags := []string{"organizations"}
	return []*Route{
		{Method: "GET", Path: "/api/organizations/{org_id}/llm-key", Summary: "Whether the org has its own LLM key, with its non-secret fields", Tags: tags, Auth: AuthAny, Perm: PermOrgRead, Resp: LLMKeyOut{}, Status: 200, Handle: s.handleGetLLMKey},
		{Method: "PUT", Path: "/api/organizations/{org_id}/llm-key", Summary: "Set the org's LLM key (owner only; stored in the vault, never returned)", Tags: tags, Auth: AuthHuman, Perm: PermOrgOwner, Body: LLMKeyPut{}, Resp: LLMKeyOut{}, Status: 200, MaxBody: 16 << 10, Handle: s.handlePutLLMKey},
		{Method: "DELETE", Path: "/api/organizations/{org_id}/llm-key", Summary: "Clear the org's LLM key (owner only)", Tags: tags, Auth: AuthHuman, Perm: PermOrgOwner, Status: 204, Handle: s.handleDeleteLLMKey},
	}
}

// orgRoleParam resolves {org_id} to the caller's role there. Another tenant's
// org reads as not found; an API key only ever sees its own org.
func (s *Server) orgRoleParam(c *Ctx) (orgID, role string, err error) {
	orgID, err = c.IDParam("org_id")
	if err != nil {
		return "", "", err
	}
	if !c.ID.Human() {
		if orgID != c.ID.OrgID {
			return "", "", errNotFoundOrg
		}
		return orgID, c.ID.Role, nil
	}
	role, err = s.db.FindRole(c.Context(), orgID, c.ID.UserID)
	return orgID, role, err
}

var errNotFoundOrg = store.NotFound("organization")

func (s *Server) requireOwner(c *Ctx) (string, error) {
	orgID, role, err := s.orgRoleParam(c)
	if err != nil {
		return "", err
	}
	if !RoleHas(role, PermOrgOwner) {
		s.onPermissionDenied(c)
		return "", forbidden("only an owner of the organization may change its LLM key")
	}
	return orgID, nil
}

func llmKeyOut(i *secrets.LLMKeyInfo) LLMKeyOut {
	at := i.UpdatedAt
	return LLMKeyOut{Configured: true, Provider: i.Provider, BaseURL: i.BaseURL, Model: i.Model,
		UpdatedBy: i.UpdatedBy, UpdatedAt: &at, LastUsedAt: i.LastUsedAt}
}

// handleGetLLMKey is GET /api/organizations/{org_id}/llm-key.
func (s *Server) handleGetLLMKey(c *Ctx) error {
	orgID, role, err := s.orgRoleParam(c)
	if err != nil {
		return err
	}
	if !RoleHas(role, PermOrgRead) || !c.ID.Can(PermOrgRead) {
		return forbidden("your role does not allow this (org:read)")
	}
	info, err := s.secrets.LLMKeyInfo(c.Context(), orgID)
	if store.IsNotFound(err) {
		return c.JSON(200, LLMKeyOut{Configured: false})
	}
	if err != nil {
		return err
	}
	return c.JSON(200, llmKeyOut(info))
}

// handlePutLLMKey is PUT /api/organizations/{org_id}/llm-key.
func (s *Server) handlePutLLMKey(c *Ctx) error {
	orgID, err := s.requireOwner(c)
	if err != nil {
		return err
	}
	var req LLMKeyPut
	if err := c.Bind(&req); err != nil {
		return err
	}
	if req.BaseURL != "" {
		u, err := url.Parse(req.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return invalid("base_url must be an absolute http(s) URL without credentials", "url_parsing", "body", "base_url")
		}
	}
	info, err := s.secrets.PutLLMKey(c.Context(), orgID, c.ID.UserID, secrets.LLMKey{Provider: req.Provider,
		BaseURL: req.BaseURL, Model: req.Model, APIKey: req.APIKey})
	if err != nil {
		return err
	}
	s.db.ReleaseWebhookRuns(orgID) // runs held for want of a model may start again (store/webhook_run_hold.go)
	c.Audit("org.llm_key_set", "success", "organization", orgID, map[string]any{"provider": req.Provider})
	return c.JSON(200, llmKeyOut(info))
}

// handleDeleteLLMKey is DELETE /api/organizations/{org_id}/llm-key.
func (s *Server) handleDeleteLLMKey(c *Ctx) error {
	orgID, err := s.requireOwner(c)
	if err != nil {
		return err
	}
	// Idempotent: clearing a key that is not set leaves the same state.
	if err := s.secrets.DeleteLLMKey(c.Context(), orgID); err != nil && !store.IsNotFound(err) {
		return err
	}
	c.Audit("org.llm_key_cleared", "success", "organization", orgID, nil)
	return c.NoContent()
}
