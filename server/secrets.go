package server

import (
	"time"

	"github.com/opsagent/opsagent/server/secrets"
	"github.com/opsagent/opsagent/store"
	"github.com/opsagent/opsagent/vault"
)

// Secret values are write-only: these routes list names and metadata, create
// or replace, and delete. The agent reads values through secrets.Keeper.Resolve.

// SecretOut describes a secret, never its value.
type SecretOut struct {
	Name        string `json:"name"`
	Scope       string `json:"scope"` // project or org
	Description string `json:"description"`
	// Overridden: an org secret that this project replaces with its own of the same name.
	Overridden bool       `json:"overridden,omitempty"`
	KeyID      string     `json:"key_id"`
	CreatedBy  string     `json:"created_by,omitempty"`
	UpdatedBy  string     `json:"updated_by,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
}

// SecretListOut lists secrets; the project list also shows the org's secrets the project inherits.
type SecretListOut struct {
	Items []SecretOut `json:"items"`
	Total int         `json:"total"`
}

// SecretPut creates or replaces a secret. The value is stored encrypted and never returned.
type SecretPut struct {
	Value       string `json:"value" validate:"required,min=1,max=262144"`
	Description string `json:"description" validate:"max=500"`
}

// secretMaxBody leaves room for JSON escaping of a 256 KiB value.
const secretMaxBody = 1 << 20

func (s *Server) secretRoutes() []*Route {
	tags := []string{"secrets"}
	return []*Route{
		{Method: "GET", Path: "/api/secrets", Summary: "List the secrets a project sees (its own and its org's), names and metadata only", Tags: tags, Auth: AuthAny, Perm: PermSecretsRead, Project: true, Resp: SecretListOut{}, Status: 200, MCP: true, Handle: s.handleListSecrets},
		{Method: "GET", Path: "/api/secrets/{name}", Summary: "Metadata of one project secret", Tags: tags, Auth: AuthAny, Perm: PermSecretsRead, Project: true, Resp: SecretOut{}, Status: 200, Handle: s.handleGetSecret},
		{Method: "PUT", Path: "/api/secrets/{name}", Summary: "Create or replace a project secret (the value is write-only)", Tags: tags, Auth: AuthAny, Perm: PermSecretsWrite, Project: true, Body: SecretPut{}, Resp: SecretOut{}, Status: 200, MaxBody: secretMaxBody, Handle: s.handlePutSecret},
		{Method: "DELETE", Path: "/api/secrets/{name}", Summary: "Delete a project secret", Tags: tags, Auth: AuthAny, Perm: PermSecretsWrite, Project: true, Status: 204, Handle: s.handleDeleteSecret},
		{Method: "GET", Path: "/api/org-secrets", Summary: "List the current org's secrets (shared by all its projects), names and metadata only", Tags: tags, Auth: AuthAny, Perm: PermSecretsRead, Resp: SecretListOut{}, Status: 200, Handle: s.handleListSecrets},
		{Method: "GET", Path: "/api/org-secrets/{name}", Summary: "Metadata of one org secret", Tags: tags, Auth: AuthAny, Perm: PermSecretsRead, Resp: SecretOut{}, Status: 200, Handle: s.handleGetSecret},
		{Method: "PUT", Path: "/api/org-secrets/{name}", Summary: "Create or replace an org secret (the value is write-only)", Tags: tags, Auth: AuthAny, Perm: PermSecretsWrite, Body: SecretPut{}, Resp: SecretOut{}, Status: 200, MaxBody: secretMaxBody, Handle: s.handlePutSecret},
		{Method: "DELETE", Path: "/api/org-secrets/{name}", Summary: "Delete an org secret", Tags: tags, Auth: AuthAny, Perm: PermSecretsWrite, Status: 204, Handle: s.handleDeleteSecret},
	}
}

func secretOut(x *store.Secret) SecretOut {
	scope := "project"
	if x.ProjectID == "" {
		scope = "org"
	}
	return SecretOut{Name: x.Name, Scope: scope, Description: x.Description, KeyID: x.KeyID, CreatedBy: x.CreatedBy,
		UpdatedBy: x.UpdatedBy, CreatedAt: x.CreatedAt, UpdatedAt: x.UpdatedAt, LastUsedAt: x.LastUsedAt}
}

// secretScope is the project of a project route, "" on the org routes.
func secretScope(c *Ctx) string {
	if c.Project != nil {
		return c.Project.ID
	}
	return ""
}

func secretNameParam(c *Ctx) (string, error) {
	n := c.Param("name")
	if err := vault.ValidateName(n); err != nil {
		return "", invalid(err.Error(), "secret_name", "path", "name")
	}
	return n, nil
}

// handleListSecrets is GET /api/secrets and GET /api/org-secrets.
func (s *Server) handleListSecrets(c *Ctx) error {
	project := secretScope(c)
	own, err := s.secrets.List(c.Context(), c.OrgID(), project, store.SecretKindEnv)
	if err != nil {
		return err
	}
	out := SecretListOut{Items: make([]SecretOut, 0, len(own))}
	names := map[string]bool{}
	for i := range own {
		out.Items = append(out.Items, secretOut(&own[i]))
		names[own[i].Name] = true
	}
	if project != "" {
		org, err := s.secrets.List(c.Context(), c.OrgID(), "", store.SecretKindEnv)
		if err != nil {
			return err
		}
		for i := range org {
			o := secretOut(&org[i])
			o.Overridden = names[o.Name]
			out.Items = append(out.Items, o)
		}
	}
	out.Total = len(out.Items)
	return c.JSON(200, out)
}

// handleGetSecret is GET /api/secrets/{name} and GET /api/org-secrets/{name}.
func (s *Server) handleGetSecret(c *Ctx) error {
	name, err := secretNameParam(c)
	if err != nil {
		return err
	}
	x, err := s.db.FindSecret(c.Context(), c.OrgID(), secretScope(c), store.SecretKindEnv, name)
	if err != nil {
		return err
	}
	return c.JSON(200, secretOut(x))
}

// handlePutSecret is PUT /api/secrets/{name} and PUT /api/org-secrets/{name}.
func (s *Server) handlePutSecret(c *Ctx) error {
	name, err := secretNameParam(c)
	if err != nil {
		return err
	}
	var req SecretPut
	if err := c.Bind(&req); err != nil {
		return err
	}
	x, created, err := s.secrets.Put(c.Context(), secrets.PutInput{OrgID: c.OrgID(), ProjectID: secretScope(c),
		Kind: store.SecretKindEnv, Name: name, Description: req.Description, Value: []byte(req.Value), ActorID: c.ID.UserID})
	if err != nil {
		return err
	}
	action := "secret.updated"
	if created {
		action = "secret.created"
	}
	c.Audit(action, "success", "secret", name, map[string]any{"scope": secretOut(x).Scope, "key_id": x.KeyID})
	return c.JSON(200, secretOut(x))
}

// handleDeleteSecret is DELETE /api/secrets/{name} and DELETE /api/org-secrets/{name}.
func (s *Server) handleDeleteSecret(c *Ctx) error {
	name, err := secretNameParam(c)
	if err != nil {
		return err
	}
	project := secretScope(c)
	if err := s.secrets.Delete(c.Context(), c.OrgID(), project, store.SecretKindEnv, name); err != nil {
		return err
	}
	scope := "project"
	if project == "" {
		scope = "org"
	}
	c.Audit("secret.deleted", "success", "secret", name, map[string]any{"scope": scope})
	return c.NoContent()
}
