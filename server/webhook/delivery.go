package webhook

import (
	"net/http"
	"strings"
)

// Each provider's own identity of a delivery, which stays the same when
// the provider (or anyone who captured the delivery) sends it again. The
// receiver keeps it as the event's idempotency key for as long as the
// event is kept (the webhook's retention), so a replay answers as a
// duplicate however late it comes, where the dedupe window would have
// forgotten it.
//
//	github     X-GitHub-Delivery header (a GUID per delivery; redeliveries keep it)
//	gitlab     Idempotency-Key header, else X-Gitlab-Event-UUID
//	sentry     Request-ID header
//	stripe     the event's "id" (evt_...) in the body
//	pagerduty  the event's "event.id" in the body
//
// Alertmanager, Grafana, Datadog and generic senders have none; they can
// send X-Idempotency-Key.
var deliveryHeaders = map[Provider][]string{
	ProviderGitHub: {"X-GitHub-Delivery"},
	ProviderGitLab: {"Idempotency-Key", "X-Gitlab-Event-UUID"},
	ProviderSentry: {"Request-ID"},
}

// maxDelivery bounds a delivery identity (as X-Idempotency-Key is bounded).
const maxDelivery = 200

func deliveryHeader(p Provider, h http.Header) string {
	for _, name := range deliveryHeaders[p] {
		if v := strings.TrimSpace(h.Get(name)); v != "" {
			return v
		}
	}
	return ""
}

// cleanDelivery drops an identity that is too long or not printable: it
// is sender-controlled, and a bad one must not make deliveries collide.
func cleanDelivery(s string) string {
	if len(s) > maxDelivery || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return ""
	}
	return s
}
