package cliclient

import (
	"net/http"
	"runtime"

	"github.com/opsagent/opsagent/server"
)

// UserAgent names the command-line client in every request it sends, as
// "opsagent-cli/0.1.0 (linux)": the sign-in grant page shows it to the person
// who approves, and Go's default (Go-http-client/1.1) tells them nothing.
func UserAgent() string { return "opsagent-cli/" + server.Version + " (" + runtime.GOOS + ")" }

// uaTransport sets UserAgent on requests that carry none, including those
// that libraries (the OAuth 2 device flow) build themselves.
type uaTransport struct{ next http.RoundTripper }

func (t uaTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("User-Agent") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("User-Agent", UserAgent())
	}
	return t.next.RoundTrip(r)
}

// WithUserAgent returns a copy of hc whose requests carry UserAgent.
func WithUserAgent(hc *http.Client) *http.Client {
	c := *hc
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = uaTransport{next: next}
	return &c
}
