package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/opsagent/opsagent/store"
)

type ctxKey int

const (
	identityKey  ctxKey = iota
	requestIDKey        // *reqState (middleware.go)
)

// loggerFrom returns the request's logger (carrying its request id).
func loggerFrom(ctx context.Context) *slog.Logger {
	if st := stateFrom(ctx); st != nil {
		return st.log.With("request_id", st.rid)
	}
	return slog.New(slog.DiscardHandler)
}

type param struct{ name, value string }

// Identity is the authenticated caller of a request.
type Identity struct {
	UserID    string
	Email     string
	OrgID     string // the org the credential acts in
	Role      string // the user's current role in OrgID
	SessionID string // login session, for access tokens
	JTI       string
	// API keys: the key's id, its declared scopes and optional project allow-list.
	KeyID    string
	Scopes   []string
	Projects []string
}

// Human reports whether the caller signed in as a person (not an API key).
func (id *Identity) Human() bool { return id != nil && id.KeyID == "" }

// IdentityFrom returns the caller of ctx, nil when unauthenticated.
func IdentityFrom(ctx context.Context) *Identity {
	id, _ := ctx.Value(identityKey).(*Identity)
	return id
}

// RequestID returns the id the access log and error bodies carry.
func RequestID(ctx context.Context) string {
	if st := stateFrom(ctx); st != nil {
		return st.rid
	}
	return ""
}

// Ctx is what every handler receives: the exchange, the route, the caller.
type Ctx struct {
	W       http.ResponseWriter
	R       *http.Request
	Route   *Route
	ID      *Identity
	Project *store.Project
	srv     *Server
}

// Context is the request's context.
func (c *Ctx) Context() context.Context { return c.R.Context() }

// Param returns a path parameter by its name in the route path.
func (c *Ctx) Param(name string) string {
	st := stateFrom(c.R.Context())
	if st == nil {
		return ""
	}
	for _, p := range st.params {
		if p.name == name {
			return p.value
		}
	}
	return ""
}

// IDParam returns a uuid path parameter; anything that is not a uuid is a
// not-found, exactly like an id that does not exist.
func (c *Ctx) IDParam(name string) (string, error) {
	v := c.Param(name)
	if !store.ValidID(v) {
		return "", store.NotFound(humanName(name))
	}
	return v, nil
}

// IDParams is IDParam of two path parameters (a task's event, rule, ...).
func (c *Ctx) IDParams(outer, inner string) (string, string, error) {
	a, err := c.IDParam(outer)
	if err != nil {
		return "", "", err
	}
	b, err := c.IDParam(inner)
	return a, b, err
}

// JSON writes v with status.
func (c *Ctx) JSON(status int, v any) error {
	writeJSON(c.W, status, v)
	return nil
}

// NoContent writes 204.
func (c *Ctx) NoContent() error {
	c.W.WriteHeader(http.StatusNoContent)
	return nil
}

// OrgID is the caller's current org.
func (c *Ctx) OrgID() string { return c.ID.OrgID }

// ProjectID is the resolved X-Project-ID of a project route.
func (c *Ctx) ProjectID() string { return c.Project.ID }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if v == nil {
		return
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func humanName(param string) string {
	switch param {
	case "org_id":
		return "organization"
	case "user_id":
		return "user"
	case "project_id":
		return "project"
	case "session_id":
		return "session"
	}
	if n := len(param); n > 3 && param[n-3:] == "_id" {
		return param[:n-3]
	}
	return param
}
