package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"

	"github.com/opsagent/opsagent/server/webhook"
)

// signDelivery adds to h the credential a sender using scheme would send
// for body: what the test-delivery button needs to go through the same
// verification as a real provider. It is the mirror of webhook.Verify.
func signDelivery(scheme webhook.Scheme, secret []byte, h http.Header, body []byte, now time.Time) {
	mac := func(parts ...[]byte) string {
		m := hmac.New(sha256.New, secret)
		for _, p := range parts {
			m.Write(p)
		}
		return hex.EncodeToString(m.Sum(nil))
	}
	switch scheme {
	case webhook.SchemeBearer:
		h.Set("Authorization", "Bearer "+string(secret))
	case webhook.SchemeHeaderToken:
		h.Set("X-Webhook-Token", string(secret))
	case webhook.SchemeGitLab:
		h.Set("X-Gitlab-Token", string(secret))
	case webhook.SchemeHMACSHA256:
		h.Set("X-Webhook-Signature", "sha256="+mac(body))
	case webhook.SchemeGitHub:
		h.Set("X-Hub-Signature-256", "sha256="+mac(body))
	case webhook.SchemeSentry:
		h.Set("Sentry-Hook-Signature", mac(body))
	case webhook.SchemePagerDuty:
		h.Set("X-PagerDuty-Signature", "v1="+mac(body))
	case webhook.SchemeStripe:
		ts := strconv.FormatInt(now.Unix(), 10)
		h.Set("Stripe-Signature", "t="+ts+",v1="+mac([]byte(ts), []byte("."), body))
	}
}
