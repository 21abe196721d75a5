// Package cliclient is the command-line side of sign-in: `opsagent login`
// runs the RFC 8628 device flow against a server (golang.org/x/oauth2 does
// the protocol) and keeps the resulting login session in the user's config
// directory; `opsagent logout` revokes that session and forgets it.
package cliclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// ClientID names this client to the server (shown when the grant is confirmed).
const ClientID = "opsagent-cli"

// Credentials is what `opsagent login` stores: a revocable "cli" login
// session (refresh token) and its current access token.
type Credentials struct {
	Server       string    `json:"server"`
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token"`
	TokenType    string    `json:"token_type"`
	Expiry       time.Time `json:"expiry"`
	CreatedAt    time.Time `json:"created_at"`
}

// DefaultPath is os.UserConfigDir()/opsagent/credentials.json.
func DefaultPath() (string, error) { return ProfilePath("") }

// ProfilePath is where a profile's credential lives: credentials.json for
// the default profile, credentials-NAME.json for the others.
func ProfilePath(profile string) (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no user config directory (set --credentials): %w", err)
	}
	name := "credentials.json"
	if profile != "" && profile != "default" {
		if strings.ContainsAny(profile, `/\`) || strings.HasPrefix(profile, ".") {
			return "", fmt.Errorf("invalid profile name %q", profile)
		}
		name = "credentials-" + profile + ".json"
	}
	return filepath.Join(dir, "opsagent", name), nil
}

// Save writes c to path with mode 0600 (directory 0700), atomically, so a
// crash never leaves half a file and no other user can read the tokens.
func Save(path string, c *Credentials) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".credentials-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// Load reads credentials saved by Save.
func Load(path string) (*Credentials, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Credentials
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

// Options configure Login and Logout.
type Options struct {
	Server     string       // base URL, e.g. https://opsagent.example.com
	Path       string       // credentials file; "" means DefaultPath
	HTTP       *http.Client // nil means a client with a 30 s timeout
	Out        io.Writer    // where the code and URL are printed
	ClientName string       // shown to the person who confirms; "" means "opsagent CLI on HOST"
}

func (o *Options) fill() error {
	o.Server = strings.TrimRight(o.Server, "/")
	if o.Server == "" {
		return errors.New("no server given (--server or OPSAGENT_SERVER)")
	}
	if o.Path == "" {
		p, err := DefaultPath()
		if err != nil {
			return err
		}
		o.Path = p
	}
	if o.HTTP == nil {
		o.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	o.HTTP = WithUserAgent(o.HTTP)
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.ClientName == "" {
		host, _ := os.Hostname()
		o.ClientName = strings.TrimSpace("opsagent CLI on " + host)
	}
	return nil
}

func (o *Options) oauth() *oauth2.Config {
	return &oauth2.Config{ClientID: ClientID, Endpoint: oauth2.Endpoint{
		DeviceAuthURL: o.Server + "/api/auth/device-code",
		TokenURL:      o.Server + "/api/auth/device-token",
		// One request per poll: auto-detection would retry each poll a second
		// way, which the server would rightly answer with slow_down.
		AuthStyle: oauth2.AuthStyleInParams,
	}}
}

// Login starts the device flow, prints where to confirm, polls until the
// grant is approved, denied or expired, and saves the credentials.
func Login(ctx context.Context, o Options) (*Credentials, error) {
	if err := o.fill(); err != nil {
		return nil, err
	}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, o.HTTP)
	cfg := o.oauth()
	da, err := cfg.DeviceAuth(ctx, oauth2.SetAuthURLParam("client_name", o.ClientName))
	if err != nil {
		return nil, fmt.Errorf("start sign-in at %s: %w", o.Server, err)
	}
	fmt.Fprintf(o.Out, "To sign in, open this address in a browser where you are signed in:\n\n  %s\n\nand check that it shows the code: %s\n\nWaiting for approval...\n",
		da.VerificationURIComplete, da.UserCode)
	tok, err := cfg.DeviceAccessToken(ctx, da)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			switch re.ErrorCode {
			case "access_denied":
				return nil, errors.New("sign-in was refused in the browser")
			case "expired_token":
				return nil, errors.New("the code expired before it was approved; run opsagent login again")
			}
		}
		return nil, fmt.Errorf("sign-in failed: %w", err)
	}
	c := &Credentials{Server: o.Server, AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken,
		TokenType: tok.TokenType, Expiry: tok.Expiry.UTC(), CreatedAt: time.Now().UTC()}
	if err := Save(o.Path, c); err != nil {
		return nil, fmt.Errorf("save credentials: %w", err)
	}
	fmt.Fprintf(o.Out, "Signed in to %s. Credentials saved to %s\n", o.Server, o.Path)
	return c, nil
}

// Logout revokes the stored session on its server (POST /api/auth/logout
// with the refresh token, which works even after the access token expired)
// and then removes the file. If the server cannot be reached the file stays,
// so the session is not silently left alive.
func Logout(ctx context.Context, o Options) error {
	if o.Path == "" {
		p, err := DefaultPath()
		if err != nil {
			return err
		}
		o.Path = p
	}
	c, err := Load(o.Path)
	if errors.Is(err, os.ErrNotExist) {
		return errors.New("not signed in (no credentials at " + o.Path + ")")
	}
	if err != nil {
		return err
	}
	if o.Server == "" {
		o.Server = c.Server
	}
	if err := o.fill(); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.Server+"/api/auth/logout", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.AccessToken)
	req.AddCookie(&http.Cookie{Name: "svc_refresh_token", Value: c.RefreshToken})
	res, err := o.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("revoke session at %s: %w (credentials kept at %s)", o.Server, err, o.Path)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		return fmt.Errorf("revoke session at %s: HTTP %d (credentials kept at %s)", o.Server, res.StatusCode, o.Path)
	}
	if err := os.Remove(o.Path); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "Signed out of %s; removed %s\n", o.Server, o.Path)
	return nil
}
