package webhook

import (
	"embed"
	"net/http"
)

// The samples are real deliveries (Alertmanager 0.25, GitLab's own test
// payloads) or payloads written to the providers' documented formats; the
// tests parse every one, so they cannot drift from what Parse accepts.
//
//go:embed testdata/samples/*.json
var samples embed.FS

// Sample returns a realistic delivery body for provider, for the
// "send test delivery" button; nil for an unknown provider. The caller gets
// its own copy.
func Sample(p Provider) []byte {
	if _, err := ParseProvider(string(p)); err != nil {
		return nil
	}
	b, err := samples.ReadFile("testdata/samples/" + string(p) + ".json")
	if err != nil {
		return nil
	}
	return b
}

// SampleHeaders returns the non-secret headers the provider sends with
// Sample(p): Content-Type and the event-name header some providers use
// instead of a body field. Add the verification header on top.
func SampleHeaders(p Provider) http.Header {
	h := http.Header{"Content-Type": {"application/json"}}
	switch p {
	case ProviderGitHub:
		h.Set("X-GitHub-Event", "workflow_run")
		h.Set("User-Agent", "GitHub-Hookshot/5a1b2c3")
	case ProviderGitLab:
		h.Set("X-Gitlab-Event", "Pipeline Hook")
		h.Set("User-Agent", "GitLab/17.5.0")
	case ProviderSentry:
		h.Set("Sentry-Hook-Resource", "event_alert")
	case ProviderAlertmanager:
		h.Set("User-Agent", "Alertmanager/0.25.0")
	case ProviderGrafana:
		h.Set("User-Agent", "Grafana")
	case ProviderStripe:
		h.Set("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)")
	case ProviderPagerDuty:
		h.Set("User-Agent", "PagerDuty-Webhook/V3.0")
	}
	return h
}
