// Package slack is the Slack side of chat channels: request signing (v0),
// the Events API and interactivity payloads, and the few Web API calls the
// bot makes, over plain HTTP. github.com/slack-go/slack was measured first:
// linked into the binary it added 2.1 MB (its client's hundreds of exported
// methods stay reachable), more than this feature's share of the size
// budget, so the tests use its slacktest server and the product speaks
// Slack's documented wire format itself.
package slack

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ErrBadSignature: the request is not signed with the channel's signing
// secret, or its timestamp is outside Slack's 5-minute window.
var ErrBadSignature = errors.New("slack: bad signature or stale timestamp")

// Tolerance is how far a request's timestamp may be from now (replays older
// than this are refused even with a valid signature).
const Tolerance = 5 * time.Minute

// Verify checks X-Slack-Signature: "v0=" + hex HMAC-SHA256 of
// "v0:<X-Slack-Request-Timestamp>:<body>" with the signing secret,
// compared in constant time, and the timestamp within Tolerance of now.
func Verify(h http.Header, body []byte, signingSecret string, now time.Time) error {
	ts := h.Get("X-Slack-Request-Timestamp")
	sig, ok := strings.CutPrefix(h.Get("X-Slack-Signature"), "v0=")
	want, err := hex.DecodeString(sig)
	if !ok || err != nil || signingSecret == "" {
		return ErrBadSignature
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || now.Sub(time.Unix(sec, 0)).Abs() > Tolerance {
		return ErrBadSignature
	}
	mac := hmac.New(sha256.New, []byte(signingSecret))
	mac.Write([]byte("v0:" + ts + ":"))
	mac.Write(body)
	if !hmac.Equal(mac.Sum(nil), want) {
		return ErrBadSignature
	}
	return nil
}
