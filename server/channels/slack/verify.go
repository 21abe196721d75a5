// Package slack is the Slack side of chat channels: request signing (v0),
// the Events API and interactivity payloads, and the Web API calls the bot
// makes (through github.com/slack-go/slack).
package slack

import (
	"errors"
	"net/http"

	"github.com/slack-go/slack"
)

// ErrBadSignature: the request is not signed with the channel's signing
// secret, or its timestamp is outside Slack's 5-minute window.
var ErrBadSignature = errors.New("slack: bad signature or stale timestamp")

// Verify checks X-Slack-Signature (v0=HMAC-SHA256 of "v0:timestamp:body")
// in constant time and the 5-minute timestamp tolerance.
func Verify(h http.Header, body []byte, signingSecret string) error {
	if signingSecret == "" {
		return ErrBadSignature
	}
	sv, err := slack.NewSecretsVerifier(h, signingSecret)
	if err != nil {
		return ErrBadSignature
	}
	if _, err := sv.Write(body); err != nil {
		return ErrBadSignature
	}
	if sv.Ensure() != nil {
		return ErrBadSignature
	}
	return nil
}
