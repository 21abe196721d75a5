package server

import (
	"encoding/json"
	"net/http"
	"regexp"
	"time"

	"github.com/opsagent/opsagent/store"
)

// PreferenceOut is one stored preference.
type PreferenceOut struct {
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// PreferencePut sets a preference to any JSON value (at most 16 KiB).
type PreferencePut struct {
	Value json.RawMessage `json:"value" validate:"required"`
}

var prefKey = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,119}$`)

const prefMaxBytes = 16 << 10

func (s *Server) preferenceRoutes() []*Route {
	tags := []string{"preferences"}
	return []*Route{
		{Method: "GET", Path: "/api/me/preferences", Summary: "List my preferences", Tags: tags, Auth: AuthAny, Resp: []PreferenceOut{}, Status: 200, Handle: s.handleListPreferences},
		{Method: "GET", Path: "/api/me/preferences/{key}", Summary: "Read one preference", Tags: tags, Auth: AuthAny, Resp: PreferenceOut{}, Status: 200, Handle: s.handleGetPreference},
		{Method: "PUT", Path: "/api/me/preferences/{key}", Summary: "Create or replace a preference", Tags: tags, Auth: AuthAny, Body: PreferencePut{}, Resp: PreferenceOut{}, Status: 200, MaxBody: prefMaxBytes + 1024, Handle: s.handlePutPreference},
		{Method: "DELETE", Path: "/api/me/preferences/{key}", Summary: "Delete a preference", Tags: tags, Auth: AuthAny, Status: 204, Handle: s.handleDeletePreference},
	}
}

func prefOut(p *store.Preference) PreferenceOut {
	return PreferenceOut{Key: p.Key, Value: json.RawMessage(p.Value), CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

func prefKeyParam(c *Ctx) (string, error) {
	k := c.Param("key")
	if !prefKey.MatchString(k) {
		return "", invalid("String should match pattern '^[a-z0-9][a-z0-9._-]{0,119}$'", "string_pattern_mismatch", "path", "key")
	}
	return k, nil
}

// handleListPreferences is GET /api/me/preferences.
func (s *Server) handleListPreferences(c *Ctx) error {
	ps, err := s.db.FindPreferences(c.Context(), c.ID.UserID)
	if err != nil {
		return err
	}
	out := make([]PreferenceOut, 0, len(ps))
	for i := range ps {
		out = append(out, prefOut(&ps[i]))
	}
	return c.JSON(200, out)
}

// handleGetPreference is GET /api/me/preferences/{key}.
func (s *Server) handleGetPreference(c *Ctx) error {
	k, err := prefKeyParam(c)
	if err != nil {
		return err
	}
	p, err := s.db.FindPreference(c.Context(), c.ID.UserID, k)
	if err != nil {
		return err
	}
	return c.JSON(200, prefOut(p))
}

// handlePutPreference is PUT /api/me/preferences/{key}.
func (s *Server) handlePutPreference(c *Ctx) error {
	k, err := prefKeyParam(c)
	if err != nil {
		return err
	}
	var req PreferencePut
	if err := c.Bind(&req); err != nil {
		return err
	}
	if len(req.Value) > prefMaxBytes {
		return &http.MaxBytesError{Limit: prefMaxBytes}
	}
	var compact json.RawMessage
	if err := json.Unmarshal(req.Value, &compact); err != nil {
		return invalid("Value must be JSON", "json_invalid", "body", "value")
	}
	p, err := s.db.PutPreference(c.Context(), c.ID.UserID, k, string(req.Value))
	if err != nil {
		return err
	}
	return c.JSON(200, prefOut(p))
}

// handleDeletePreference is DELETE /api/me/preferences/{key}.
func (s *Server) handleDeletePreference(c *Ctx) error {
	k, err := prefKeyParam(c)
	if err != nil {
		return err
	}
	if err := s.db.DeletePreference(c.Context(), c.ID.UserID, k); err != nil {
		return err
	}
	return c.NoContent()
}
