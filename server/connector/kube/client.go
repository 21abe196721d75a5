package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Client is a typed REST client for the few resources the tools use.
type Client struct {
	cfg  *Config
	http *http.Client
}

// New builds a client for a cluster.
func New(cfg *Config) *Client { return &Client{cfg: cfg, http: cfg.httpClient()} }

// Cluster is the name the server shows for this cluster.
func (c *Client) Cluster() string { return c.cfg.Cluster }

// APIError is the cluster's refusal, in its own words (a metav1.Status).
type APIError struct {
	Code    int
	Reason  string
	Message string
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Code)
	}
	return fmt.Sprintf("the cluster answered %d %s: %s", e.Code, e.Reason, msg)
}

// IsStatus reports whether err is the cluster's answer with that code.
func IsStatus(err error, code int) bool {
	e, ok := err.(*APIError)
	return ok && e.Code == code
}

// maxBody bounds one response read into memory (a list page, a log tail).
const maxBody = 16 << 20

// request is one call. body is JSON-encoded unless it is []byte.
func (c *Client) request(ctx context.Context, method, path string, q url.Values, contentType string, body any) (*http.Response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(enc)
	}
	u := c.cfg.Server + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "opsagent-connector")
	if rd != nil {
		if contentType == "" {
			contentType = "application/json"
		}
		req.Header.Set("Content-Type", contentType)
	}
	tok, err := c.cfg.bearer()
	if err != nil {
		return nil, err
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the cluster at %s could not be reached: %v", c.cfg.Server, err)
	}
	if res.StatusCode >= 300 {
		defer res.Body.Close()
		return nil, decodeStatus(res)
	}
	return res, nil
}

func decodeStatus(res *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	var st struct {
		Reason  string `json:"reason"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &st) != nil || st.Message == "" {
		st.Message = strings.TrimSpace(string(raw))
	}
	if st.Reason == "" {
		st.Reason = strings.ReplaceAll(http.StatusText(res.StatusCode), " ", "")
	}
	return &APIError{Code: res.StatusCode, Reason: st.Reason, Message: st.Message}
}

// do sends a request and decodes the JSON answer into out (when not nil).
func (c *Client) do(ctx context.Context, method, path string, q url.Values, contentType string, body, out any) error {
	res, err := c.request(ctx, method, path, q, contentType, body)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, maxBody))
		return nil
	}
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("reading the cluster's answer: %v", err)
	}
	if len(raw) > maxBody {
		return fmt.Errorf("the cluster's answer is over %d MiB; ask for fewer items (limit) or a narrower selector", maxBody>>20)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("the cluster's answer is not the JSON expected: %v", err)
	}
	return nil
}

// get reads one JSON document.
func (c *Client) get(ctx context.Context, path string, q url.Values, out any) error {
	return c.do(ctx, http.MethodGet, path, q, "", nil, out)
}

// Version is the cluster's /version gitVersion.
func (c *Client) Version(ctx context.Context) (string, error) {
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := c.get(ctx, "/version", nil, &v); err != nil {
		return "", err
	}
	return v.GitVersion, nil
}
