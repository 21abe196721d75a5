package server

import (
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/opsagent/opsagent/server/auth"
	"github.com/opsagent/opsagent/store"
)

// API keys look like opsk_<12 hex prefix>_<43 base64url secret>. The prefix
// finds the row; only SHA-256 of the secret is stored and compared in
// constant time. A key acts as its creator in its org, never further: its
// effective permission on every request is its scopes ∩ the creator's
// current role ∩ its project allow-list ∩ the projects the creator may see.
const (
	keyPrefixLen = 12
	keyMaxLen    = 128
	// keyTouchEvery bounds last_used_at writes: one per key and address per minute.
	keyTouchEvery = time.Minute
)

// APIKeyCreate asks for a key. scopes are permission names (see x-roles) or
// "*" for everything the creator may do; projects is an optional allow-list.
type APIKeyCreate struct {
	Name      string     `json:"name" validate:"required,min=1,max=120"`
	Scopes    []string   `json:"scopes" validate:"required,min=1,max=64"`
	Projects  []string   `json:"projects,omitempty" validate:"max=100"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// APIKeyOut describes a key; the secret is never shown again.
type APIKeyOut struct {
	ID           string     `json:"id"`
	Name         string     `json:"name"`
	Prefix       string     `json:"prefix"`
	Scopes       []string   `json:"scopes"`
	Projects     []string   `json:"projects"`
	CreatedBy    string     `json:"created_by"`
	CreatorEmail string     `json:"creator_email"`
	CreatedAt    time.Time  `json:"created_at"`
	ExpiresAt    *time.Time `json:"expires_at"`
	LastUsedAt   *time.Time `json:"last_used_at"`
	LastIP       string     `json:"last_ip"`
	RevokedAt    *time.Time `json:"revoked_at"`
	Status       string     `json:"status"` // active, expired, revoked
}

// APIKeyCreated is the one response that carries the full key.
type APIKeyCreated struct {
	APIKeyOut
	Key string `json:"key"`
}

func (s *Server) apiKeyRoutes() []*Route {
	tags := []string{"api-keys"}
	return []*Route{
		{Method: "GET", Path: "/api/api-keys", Summary: "List API keys of the current organization (admins see all, others their own)", Tags: tags, Auth: AuthHuman, Perm: PermOrgRead, Resp: []APIKeyOut{}, Status: 200, Handle: s.handleListKeys},
		{Method: "POST", Path: "/api/api-keys", Summary: "Create an API key acting as me in the current organization; the key is shown once; needs a recent re-authentication", Tags: tags, Auth: AuthHuman, RecentAuth: true, Perm: PermOrgRead, Body: APIKeyCreate{}, Resp: APIKeyCreated{}, Status: 201, MaxBody: 32 << 10, Handle: s.handleCreateKey},
		{Method: "DELETE", Path: "/api/api-keys/{key_id}", Summary: "Revoke an API key (my own, or any with org:admin)", Tags: tags, Auth: AuthHuman, Perm: PermOrgRead, Status: 204, Handle: s.handleRevokeKey},
	}
}

func (s *Server) keyOut(k *store.APIKey) APIKeyOut {
	st := "active"
	switch {
	case k.RevokedAt != nil:
		st = "revoked"
	case k.ExpiresAt != nil && !k.ExpiresAt.After(s.Now()):
		st = "expired"
	}
	return APIKeyOut{ID: k.ID, Name: k.Name, Prefix: "opsk_" + k.Prefix, Scopes: k.Scopes, Projects: k.Projects, CreatedBy: k.CreatedBy,
		CreatorEmail: k.CreatorEmail, CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt, LastUsedAt: k.LastUsedAt, LastIP: k.LastIP, RevokedAt: k.RevokedAt, Status: st}
}

// handleListKeys is GET /api/api-keys.
func (s *Server) handleListKeys(c *Ctx) error {
	by := c.ID.UserID
	if c.ID.Can(PermOrgAdmin) {
		by = ""
	}
	keys, err := s.db.FindAPIKeys(c.Context(), c.OrgID(), by)
	if err != nil {
		return err
	}
	out := make([]APIKeyOut, len(keys))
	for i, k := range keys {
		out[i] = s.keyOut(k)
	}
	return c.JSON(200, out)
}

// handleCreateKey is POST /api/api-keys. Scopes beyond the creator's role are
// accepted: they never take effect unless the creator's role grows.
func (s *Server) handleCreateKey(c *Ctx) error {
	var req APIKeyCreate
	if err := c.Bind(&req); err != nil {
		return err
	}
	known := map[Perm]bool{}
	for _, p := range AllPerms() {
		known[p] = true
	}
	for i, sc := range req.Scopes {
		if sc != "*" && !known[Perm(sc)] {
			return invalid("Unknown scope; use a permission name or *", "enum", "body", "scopes", i)
		}
	}
	for i, p := range req.Projects {
		if !store.ValidID(p) {
			return invalid("Input should be a valid UUID", "uuid_parsing", "body", "projects", i)
		}
	}
	if req.ExpiresAt != nil && !req.ExpiresAt.After(s.Now()) {
		return invalid("expires_at must be in the future", "value_error", "body", "expires_at")
	}
	if req.Projects == nil {
		req.Projects = []string{}
	}
	prefix := hex.EncodeToString(auth.RandomBytes(keyPrefixLen / 2))
	secret := auth.RandomToken(32)
	k := &store.APIKey{ID: store.NewID(), OrgID: c.OrgID(), CreatedBy: c.ID.UserID, CreatorEmail: c.ID.Email, Name: req.Name, Prefix: prefix,
		SecretHash: auth.HashToken(secret), Scopes: req.Scopes, Projects: req.Projects, ExpiresAt: req.ExpiresAt}
	if err := s.db.CreateAPIKey(c.Context(), k); err != nil {
		return err
	}
	c.Audit("api_key.created", "success", "api_key", k.ID, map[string]any{"name": k.Name, "scopes": k.Scopes, "projects": k.Projects})
	return c.JSON(http.StatusCreated, APIKeyCreated{APIKeyOut: s.keyOut(k), Key: "opsk_" + prefix + "_" + secret})
}

// handleRevokeKey is DELETE /api/api-keys/{key_id}.
func (s *Server) handleRevokeKey(c *Ctx) error {
	id, err := c.IDParam("key_id")
	if err != nil {
		return err
	}
	k, err := s.db.FindAPIKey(c.Context(), c.OrgID(), id)
	if err != nil {
		return err
	}
	if k.CreatedBy != c.ID.UserID && !c.ID.Can(PermOrgAdmin) {
		// Someone else's key reads like a random id to a non-admin.
		return store.NotFound("API key")
	}
	if err := s.db.RevokeAPIKey(c.Context(), c.OrgID(), id); err != nil {
		return err
	}
	c.Audit("api_key.revoked", "success", "api_key", id, nil)
	return c.NoContent()
}

// authenticateKey is the apiKey hook: it resolves opsk_ keys on every request.
func (s *Server) authenticateKey(r *http.Request, tok string) (*Identity, error) {
	bad := &store.Error{Code: store.EUnauthorized, Message: "Invalid API key", Reason: "invalid_api_key"}
	if len(tok) > keyMaxLen || len(tok) < 5+keyPrefixLen+2 || tok[5+keyPrefixLen] != '_' {
		return nil, bad
	}
	// An address that keeps presenting keys that match nothing is refused
	// before the lookup and the hash: guessing costs the guesser, not us.
	ip := s.clientIP(r)
	if ok, retry := s.limits.keyMisses.Check(ip); !ok {
		return nil, &RateLimitError{RetryAfter: retry}
	}
	prefix, secret := tok[5:5+keyPrefixLen], tok[5+keyPrefixLen+1:]
	p, err := s.db.FindKeyPrincipal(r.Context(), prefix)
	if store.IsNotFound(err) {
		s.limits.keyMisses.Allow(ip)
		return nil, bad
	}
	if err != nil {
		return nil, err
	}
	k := p.Key
	if subtle.ConstantTimeCompare(auth.HashToken(secret), k.SecretHash) != 1 {
		s.limits.keyMisses.Allow(ip)
		return nil, bad
	}
	now := s.Now()
	switch {
	case k.RevokedAt != nil:
		return nil, &store.Error{Code: store.EUnauthorized, Message: "This API key was revoked", Reason: "api_key_revoked"}
	case k.ExpiresAt != nil && !k.ExpiresAt.After(now):
		return nil, &store.Error{Code: store.EUnauthorized, Message: "This API key has expired", Reason: "api_key_expired"}
	case p.CreatorDeleted:
		return nil, &store.Error{Code: store.EUnauthorized, Message: "The creator of this API key closed their account", Reason: "api_key_creator_gone"}
	case k.CreatedAt.Before(p.TokensValidAfter):
		return nil, &store.Error{Code: store.EUnauthorized, Message: "This API key was voided when its creator signed out everywhere", Reason: "api_key_revoked"}
	case p.Role == "":
		return nil, &store.Error{Code: store.EUnauthorized, Message: "The creator of this API key is no longer a member of its organization", Reason: "api_key_creator_gone"}
	}
	id := &Identity{UserID: k.CreatedBy, Email: p.CreatorEmail, OrgID: k.OrgID, Role: p.Role, KeyID: k.ID, Scopes: k.Scopes, Projects: k.Projects}
	if k.LastIP != ip || k.LastUsedAt == nil || now.Sub(*k.LastUsedAt) >= keyTouchEvery {
		newIP, err := s.db.TouchAPIKey(r.Context(), k.ID, ip)
		if err != nil {
			loggerFrom(r.Context()).Warn("api key touch", "key_id", k.ID, "err", err)
		}
		if newIP {
			s.audit(r.Context(), AuditEvent{Action: "api_key.new_ip", Outcome: "success", OrgID: k.OrgID, ActorUserID: k.CreatedBy, ActorKeyID: k.ID,
				TargetType: "api_key", TargetID: k.ID, IP: ip, UserAgent: truncate(r.UserAgent(), 256), Detail: map[string]any{"previous_ip": k.LastIP}})
		}
	}
	return id, nil
}
