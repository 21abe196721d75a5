package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/opsagent/opsagent/server/cliclient"
)

// credential is what the client signs requests with: OPSAGENT_TOKEN (an
// opsk_ API key or an access token, used as given) or the sign-in `opsagent
// login` stored, whose access token is refreshed shortly before it expires
// (and once more when the server refuses it) and saved back.
type credential struct {
	mu     sync.Mutex
	static string // OPSAGENT_TOKEN
	path   string // stored sign-in
	stored *cliclient.Credentials
	base   string
}

// refreshMargin: refresh this long before the access token expires, so a
// request never leaves with a token about to die.
const refreshMargin = 30 * time.Second

func (c *credential) canRefresh() bool {
	return c.static == "" && c.stored != nil && c.stored.RefreshToken != ""
}

// token returns the access token to send; force refreshes first.
func (c *credential) token(ctx context.Context, hc *http.Client, force bool) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.static != "" {
		return c.static, nil
	}
	if force || time.Until(c.stored.Expiry) < refreshMargin {
		if err := c.refresh(ctx, hc); err != nil {
			return "", err
		}
	}
	return c.stored.AccessToken, nil
}

// refresh exchanges the refresh token (POST /api/auth/refresh): the answer
// carries the new access token, and the rotated refresh token comes back as
// the svc_refresh_token cookie.
func (c *credential) refresh(ctx context.Context, hc *http.Client) error {
	body, _ := json.Marshal(map[string]string{"refresh_token": c.stored.RefreshToken})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/api/auth/refresh", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", cliclient.UserAgent())
	res, err := hc.Do(req)
	if err != nil {
		return errors.New("cannot reach " + c.base + " to refresh the sign-in: " + unwrapURLError(err).Error())
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden {
		return expired()
	}
	if res.StatusCode != http.StatusOK {
		return readAPIError(res)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
	}
	if err := json.NewDecoder(res.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		return errors.New("the server's refresh answer could not be read")
	}
	next := *c.stored
	next.AccessToken = tok.AccessToken
	next.Expiry = time.Now().Add(time.Duration(tok.ExpiresIn) * time.Second).UTC()
	for _, ck := range res.Cookies() {
		if ck.Name == "svc_refresh_token" && ck.Value != "" {
			next.RefreshToken = ck.Value
		}
	}
	c.stored = &next
	// The old refresh token is spent; a file left with it would sign out
	// the next run, so a failed save is an error now.
	return cliclient.Save(c.path, c.stored)
}

func expired() error {
	return &Error{Code: ExitPermission, Err: errors.New("your sign-in has expired or was revoked; run `opsagent login` to sign in again")}
}

// refused explains a 401 in terms of the credential that was refused.
func (c *credential) refused(apiErr *APIError) error {
	if c.static != "" {
		return &Error{Code: ExitPermission, Err: errors.New("the server refused OPSAGENT_TOKEN: " + apiErr.Detail)}
	}
	return expired()
}
