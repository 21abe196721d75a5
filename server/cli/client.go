package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/cliclient"
)

// client is one server, one credential and (for project-scoped routes) one
// project. Bodies are buffered so a request can be sent again after the
// credential was refreshed.
type client struct {
	base    string
	auth    *credential
	project string
	hc      *http.Client
}

// APIError is a non-2xx answer: the server's detail, printed as it is.
type APIError struct {
	Status int
	Detail string
	Code   string
}

func (e *APIError) Error() string { return e.Detail }

// ExitCode: 404 not found (3); 401 and 403 permission (4); 422 bad input
// (2, like any other usage mistake); everything else 1.
func (e *APIError) ExitCode() int {
	switch e.Status {
	case http.StatusNotFound:
		return ExitNotFound
	case http.StatusUnauthorized, http.StatusForbidden:
		return ExitPermission
	case http.StatusUnprocessableEntity:
		return ExitUsage
	}
	return ExitError
}

// readAPIError turns an error response into an APIError; both detail shapes
// of the conventions (a string, or FastAPI's list of {loc, msg}) read plainly.
func readAPIError(res *http.Response) *APIError {
	b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	e := &APIError{Status: res.StatusCode}
	var body struct {
		Detail json.RawMessage `json:"detail"`
		Code   string          `json:"code"`
	}
	if json.Unmarshal(b, &body) == nil && len(body.Detail) > 0 {
		e.Code = body.Code
		var s string
		var list []struct {
			Loc []any  `json:"loc"`
			Msg string `json:"msg"`
		}
		switch {
		case json.Unmarshal(body.Detail, &s) == nil:
			e.Detail = s
		case json.Unmarshal(body.Detail, &list) == nil:
			var parts []string
			for _, it := range list {
				var loc []string
				for _, l := range it.Loc {
					loc = append(loc, fmt.Sprint(l))
				}
				parts = append(parts, strings.Join(loc, ".")+": "+it.Msg)
			}
			e.Detail = "invalid input: " + strings.Join(parts, "; ")
		}
	}
	if e.Detail == "" {
		e.Detail = fmt.Sprintf("the server answered %s", res.Status)
	}
	if res.StatusCode == http.StatusTooManyRequests {
		if ra := res.Header.Get("Retry-After"); ra != "" {
			e.Detail += " (retry after " + ra + " s)"
		}
	}
	return e
}

// send makes one request and returns the response when it is 2xx; the
// caller closes the body. A 401 with a stored sign-in refreshes it once and
// sends the request again.
func (c *client) send(ctx context.Context, method, path string, q url.Values, body any, hdr http.Header) (*http.Response, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return nil, err
		}
	}
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	for attempt := 0; ; attempt++ {
		tok, err := c.auth.token(ctx, c.hc, attempt > 0)
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(payload))
		if err != nil {
			return nil, err
		}
		for k, v := range hdr {
			req.Header[k] = v
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("User-Agent", cliclient.UserAgent())
		req.Header.Set("Authorization", "Bearer "+tok)
		if c.project != "" {
			req.Header.Set("X-Project-ID", c.project)
		}
		res, err := c.hc.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("cannot reach %s: %w", c.base, unwrapURLError(err))
		}
		if res.StatusCode/100 == 2 {
			return res, nil
		}
		apiErr := readAPIError(res)
		res.Body.Close()
		if res.StatusCode == http.StatusUnauthorized {
			if attempt == 0 && c.auth.canRefresh() {
				continue
			}
			return nil, c.auth.refused(apiErr)
		}
		return nil, apiErr
	}
}

// call sends a request and decodes a JSON answer into out (when not nil).
// raw, when not nil, receives the body as the server sent it (for --json).
func (c *client) call(ctx context.Context, method, path string, q url.Values, body, out any, raw *json.RawMessage) error {
	return c.callWithin(ctx, 60*time.Second, method, path, q, body, out, raw)
}

// callWithin is call for a request the server may take longer over (a
// postmortem draft waits on a model for up to 3 minutes).
func (c *client) callWithin(ctx context.Context, limit time.Duration, method, path string, q url.Values, body, out any, raw *json.RawMessage) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	res, err := c.send(ctx, method, path, q, body, nil)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 32<<20))
	if err != nil {
		return err
	}
	if raw != nil {
		*raw = json.RawMessage(b)
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("unexpected answer from %s %s: %w", method, path, err)
		}
	}
	return nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// patient is the client with a transport that waits up to limit for an
// answer's headers (app.client's waits 60 s), for the few slow routes.
func (c *client) patient(limit time.Duration) *client {
	cp := *c
	if tr, ok := c.hc.Transport.(*http.Transport); ok {
		tr = tr.Clone()
		tr.ResponseHeaderTimeout = limit
		cp.hc = &http.Client{Transport: tr}
	}
	return &cp
}
