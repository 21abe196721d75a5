package server

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// ClientErrorIn is a browser error report. Only the URL path, message, stack
// and user agent are kept, each scrubbed of anything token-like.
type ClientErrorIn struct {
	Message   string         `json:"message" validate:"required,min=1,max=4000"`
	Stack     string         `json:"stack,omitempty" validate:"max=20000"`
	URL       string         `json:"url,omitempty" validate:"max=4000"`
	UserAgent string         `json:"user_agent,omitempty" validate:"max=512"`
	Extra     map[string]any `json:"extra,omitempty"`
}

// ClientEventIn is a console telemetry event.
type ClientEventIn struct {
	Event string         `json:"event" validate:"required,max=120,pattern=^console\\.[a-z0-9_.]+$"`
	Props map[string]any `json:"props,omitempty"`
}

func (s *Server) observabilityRoutes() []*Route {
	tags := []string{"observability"}
	return []*Route{
		{Method: "POST", Path: "/api/observability/client-errors", Summary: "Report a console error (scrubbed before storage)", Tags: tags, Auth: AuthNone, Body: ClientErrorIn{}, Status: 204, MaxBody: 64 << 10, Handle: s.handleClientError},
		{Method: "POST", Path: "/api/observability/client-events", Summary: "Record a console telemetry event (100/min per caller)", Tags: tags, Auth: AuthNone, Body: ClientEventIn{}, Resp: map[string]bool{}, Status: 200, MaxBody: 16 << 10, Handle: s.handleClientEvent},
	}
}

var (
	// Things that look like credentials: JWTs, our API keys, bearer values,
	// key=value secrets, long opaque strings, and e-mail addresses.
	scrubJWT    = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}`)
	scrubKey    = regexp.MustCompile(`opsk_[A-Za-z0-9_-]+`)
	scrubBearer = regexp.MustCompile(`(?i)(bearer|basic)\s+[A-Za-z0-9._~+/=-]+`)
	scrubKV     = regexp.MustCompile(`(?i)((?:access_|refresh_|mfa_|id_)?token|password|passwd|secret|api[_-]?key|authorization|session|code)(["']?\s*[:=]\s*["']?)[^\s"'&,;]+`)
	scrubLong   = regexp.MustCompile(`[A-Za-z0-9_+/=-]{32,}`)
	scrubEmail  = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`)
)

// scrub removes token-like strings from free text.
func scrub(s string) string {
	s = scrubJWT.ReplaceAllString(s, "[redacted]")
	s = scrubKey.ReplaceAllString(s, "[redacted]")
	s = scrubBearer.ReplaceAllString(s, "$1 [redacted]")
	s = scrubKV.ReplaceAllString(s, "$1$2[redacted]")
	s = scrubEmail.ReplaceAllString(s, "[email]")
	return scrubLong.ReplaceAllString(s, "[redacted]")
}

// pathOnly keeps the path of a URL: no host, query or fragment.
func pathOnly(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	return truncate(scrub(u.EscapedPath()), 512)
}

// handleClientError is POST /api/observability/client-errors.
func (s *Server) handleClientError(c *Ctx) error {
	if ok, retry := s.limits.clientErrors.Allow(s.clientIP(c.R)); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	var req ClientErrorIn
	if err := c.Bind(&req); err != nil {
		return err
	}
	ua := req.UserAgent
	if ua == "" {
		ua = c.R.UserAgent()
	}
	e := storeClientError(pathOnly(req.URL), scrub(req.Message), scrub(req.Stack), truncate(ua, 512))
	if err := s.db.CreateClientError(c.Context(), e); err != nil {
		return err
	}
	return c.NoContent()
}

// labelOf reduces a prop value to a label of at most 32 characters: strings
// and numbers as text, anything structured as its kind.
func labelOf(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = scrub(x)
	case float64:
		s = fmt.Sprint(x)
	case bool:
		s = fmt.Sprint(x)
	case nil:
		s = "null"
	case []any:
		s = "list"
	case map[string]any:
		s = "object"
	default:
		s = "value"
	}
	return truncate(s, 32)
}

// handleClientEvent is POST /api/observability/client-events: 100 a minute per
// caller identity (API key, else user, else IP).
func (s *Server) handleClientEvent(c *Ctx) error {
	who := "ip:" + s.clientIP(c.R)
	userID := ""
	if tok, _ := bearer(c.R); tok != "" {
		if id, _, err := s.authenticate(c.R); err == nil {
			userID = id.UserID
			who = "user:" + id.UserID
			if id.KeyID != "" {
				who = "key:" + id.KeyID
			}
		}
	}
	if ok, retry := s.limits.clientEvents.Allow(who); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	var req ClientEventIn
	if err := c.Bind(&req); err != nil {
		return err
	}
	keys := make([]string, 0, len(req.Props))
	for k := range req.Props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	props := map[string]string{}
	for _, k := range keys {
		if len(props) >= 32 {
			break
		}
		props[truncate(k, 32)] = labelOf(req.Props[k])
	}
	b, _ := json.Marshal(props)
	if err := s.db.CreateClientEvent(c.Context(), req.Event, string(b), userID); err != nil {
		return err
	}
	return c.JSON(200, map[string]bool{"accepted": true})
}
