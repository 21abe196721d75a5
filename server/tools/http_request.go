package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm"
)

// HTTPRequest is the http_request tool: one HTTP call to a URL the model
// names, through the egress guard. GET, HEAD and OPTIONS only read; other
// methods can change things, so they need approval unless a rule allows.
type HTTPRequest struct {
	Egress    *Egress
	Timeout   time.Duration // default 30 s
	MaxBody   int           // response bytes kept, default 64 KiB
	MaxSend   int           // request body bytes, default 64 KiB
	UserAgent string        // default "opsagent"
}

type httpArgs struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

var readMethods = map[string]bool{"GET": true, "HEAD": true, "OPTIONS": true}

// Spec describes the tool to the model.
func (h *HTTPRequest) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "http_request",
		Description: "Send one HTTP request and read the response (status, headers, body). Private, loopback and " +
			"link-local addresses are refused unless the project allow-lists them. GET/HEAD/OPTIONS run freely; " +
			"other methods may need a person's approval.",
		Parameters: schema(map[string]any{
			"method":  str("HTTP method", "enum", []string{"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"}),
			"url":     str("absolute http(s) URL", "minLength", 8, "maxLength", 2048),
			"headers": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string", "maxLength": 4096}, "maxProperties": 32},
			"body":    str("request body", "maxLength", 65536),
		}, "method", "url")}
}

// ReadOnly is false: some methods change things (see ReadOnlyCall).
func (h *HTTPRequest) ReadOnly() bool { return false }

// ReadOnlyCall reports whether this call only reads.
func (h *HTTPRequest) ReadOnlyCall(args json.RawMessage) bool {
	var a httpArgs
	return json.Unmarshal(args, &a) == nil && readMethods[a.Method]
}

// Render shows the call as METHOD URL, the text rules match on.
func (h *HTTPRequest) Render(args json.RawMessage) (Rendered, error) {
	var a httpArgs
	if err := decode(args, &a); err != nil {
		return Rendered{}, err
	}
	u, err := url.Parse(a.URL)
	if err != nil {
		return Rendered{}, fmt.Errorf("bad url: %v", err)
	}
	return Rendered{Target: u.Host, Command: a.Method + " " + a.URL}, nil
}

// Run sends the request.
func (h *HTTPRequest) Run(ctx context.Context, args json.RawMessage) (string, error) {
	var a httpArgs
	if err := decode(args, &a); err != nil {
		return "", err
	}
	u, err := url.Parse(a.URL)
	if err != nil {
		return "", fmt.Errorf("bad url: %v", err)
	}
	if err := CheckURL(u); err != nil {
		return "", err
	}
	if maxSend := orDefault(h.MaxSend, 64<<10); len(a.Body) > maxSend {
		return "", fmt.Errorf("request body larger than %d bytes", maxSend)
	}
	var body io.Reader
	if a.Body != "" {
		body = strings.NewReader(a.Body)
	}
	req, err := http.NewRequestWithContext(ctx, a.Method, u.String(), body)
	if err != nil {
		return "", err
	}
	for k, v := range a.Headers {
		req.Header.Set(k, v)
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", orDefaultStr(h.UserAgent, "opsagent"))
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	resp, err := h.Egress.Client(timeout).Do(req)
	if err != nil {
		return "", fmt.Errorf("request failed: %v", err)
	}
	defer resp.Body.Close()
	limit := orDefault(h.MaxBody, 64<<10)
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return "", fmt.Errorf("reading the response: %v", err)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%s %s\n", resp.Proto, resp.Status)
	if resp.Request != nil && resp.Request.URL.String() != u.String() {
		fmt.Fprintf(&out, "(after redirects: %s)\n", resp.Request.URL)
	}
	keys := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "Set-Cookie" {
			continue // session cookies are credentials, not data for the model
		}
		fmt.Fprintf(&out, "%s: %s\n", k, strings.Join(resp.Header[k], ", "))
	}
	out.WriteString("\n")
	if len(b) > limit {
		out.Write(b[:limit])
		fmt.Fprintf(&out, "\n[response body cut at %d bytes]", limit)
	} else {
		out.Write(b)
	}
	return out.String(), nil
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

func orDefaultStr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
