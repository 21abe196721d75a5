package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm"
)

// Endpoint is a resolved integration: where its API is and the headers
// (credentials) every request carries. Header values are secrets: they are
// sent, never shown.
type Endpoint struct {
	Kind    string
	Name    string
	BaseURL string
	Header  http.Header
}

// Endpoints finds the project's integration of a kind by name; name ""
// picks the only one (an error names the choices when there are several).
type Endpoints func(ctx context.Context, kind, name string) (*Endpoint, error)

// Query is a read-only tool over one integration kind's HTTP API. The
// model supplies parameters; the path is fixed, so the model cannot turn a
// query tool into a general HTTP client.
type Query struct {
	Name        string
	Kind        string
	Description string
	Params      map[string]any // JSON Schema properties besides "integration"
	Required    []string
	// Build turns the arguments into the API path and query.
	Build func(args map[string]any, now time.Time) (path string, q url.Values, err error)
	// Format turns the response body into text for the model (nil: as is).
	Format func(body []byte) (string, error)

	Endpoints Endpoints
	Egress    *Egress
	Now       func() time.Time
	Timeout   time.Duration // default 30 s
	MaxBody   int           // response bytes read, default 1 MiB
}

// Spec describes the tool to the model.
func (q *Query) Spec() llm.ToolSpec {
	props := map[string]any{"integration": str("name of the "+q.Kind+" integration; may be omitted when the project has only one", "maxLength", 120)}
	for k, v := range q.Params {
		props[k] = v
	}
	return llm.ToolSpec{Name: q.Name, Description: q.Description, Parameters: schema(props, q.Required...)}
}

// ReadOnly is true: query tools only read.
func (q *Query) ReadOnly() bool { return true }

// Render shows the integration and the API call.
func (q *Query) Render(args json.RawMessage) (Rendered, error) {
	var m map[string]any
	if err := decode(args, &m); err != nil {
		return Rendered{}, err
	}
	name, _ := m["integration"].(string)
	path, v, err := q.Build(m, q.now())
	if err != nil {
		return Rendered{}, err
	}
	return Rendered{Target: q.Kind + ":" + name, Command: "GET " + path + "?" + v.Encode()}, nil
}

func (q *Query) now() time.Time {
	if q.Now == nil {
		return time.Now().UTC()
	}
	return q.Now()
}

// Run calls the integration's API.
func (q *Query) Run(ctx context.Context, args json.RawMessage) (string, error) {
	var m map[string]any
	if err := decode(args, &m); err != nil {
		return "", err
	}
	name, _ := m["integration"].(string)
	ep, err := q.Endpoints(ctx, q.Kind, name)
	if err != nil {
		return "", err
	}
	path, v, err := q.Build(m, q.now())
	if err != nil {
		return "", err
	}
	u, err := url.Parse(strings.TrimSuffix(ep.BaseURL, "/") + path)
	if err != nil {
		return "", fmt.Errorf("integration %s has a bad URL", ep.Name)
	}
	u.RawQuery = v.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	for k, vs := range ep.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	timeout := q.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	resp, err := q.Egress.Client(timeout).Do(req)
	if err != nil {
		return "", fmt.Errorf("%s %s unreachable: %v", q.Kind, ep.Name, err)
	}
	defer resp.Body.Close()
	limit := orDefault(q.MaxBody, 1<<20)
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return "", fmt.Errorf("reading the %s response: %v", q.Kind, err)
	}
	cut := len(body) > limit
	if cut {
		body = body[:limit]
	}
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("%s %s answered %s: %s", q.Kind, ep.Name, resp.Status, oneLine(string(body[:min(len(body), 2000)])))
	}
	out := string(body)
	if q.Format != nil && !cut {
		if out, err = q.Format(body); err != nil {
			return "", fmt.Errorf("%s %s answered something unexpected: %v", q.Kind, ep.Name, err)
		}
	}
	if cut {
		out += fmt.Sprintf("\n[response cut at %d bytes: narrow the query]", limit)
	}
	return fmt.Sprintf("%s %s: %s\n%s", q.Kind, ep.Name, req.URL.Path, out), nil
}

// argString returns a string argument or def.
func argString(m map[string]any, key, def string) string {
	if s, ok := m[key].(string); ok && s != "" {
		return s
	}
	return def
}

// argDuration reads a Go or Prometheus-style duration ("90s", "15m", "2h", "1d").
func argDuration(m map[string]any, key string, def time.Duration) (time.Duration, error) {
	s := argString(m, key, "")
	if s == "" {
		return def, nil
	}
	if strings.HasSuffix(s, "d") {
		if d, err := time.ParseDuration(strings.TrimSuffix(s, "d") + "h"); err == nil {
			return d * 24, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s: %q is not a positive duration such as 90s, 15m, 2h or 1d", key, s)
	}
	return d, nil
}

// argTime reads an RFC 3339 time or returns def.
func argTime(m map[string]any, key string, def time.Time) (time.Time, error) {
	s := argString(m, key, "")
	if s == "" {
		return def, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %q is not an RFC 3339 time", key, s)
	}
	return t, nil
}

var durationProp = str(`duration such as "90s", "15m", "2h" or "1d"`, "maxLength", 16)
var timeProp = str("RFC 3339 time", "format", "date-time", "maxLength", 40)
