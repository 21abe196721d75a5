package webhook

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Provider names a sender whose payload format we understand.
type Provider string

const (
	ProviderAlertmanager Provider = "alertmanager"
	ProviderGrafana      Provider = "grafana"
	ProviderDatadog      Provider = "datadog"
	ProviderSentry       Provider = "sentry"
	ProviderPagerDuty    Provider = "pagerduty"
	ProviderGitHub       Provider = "github"
	ProviderGitLab       Provider = "gitlab"
	ProviderStripe       Provider = "stripe"
	// ProviderGeneric accepts any JSON object and guesses fields by name.
	ProviderGeneric Provider = "generic"
)

// Normalized severities, most to least urgent.
const (
	SeverityCritical = "critical"
	SeverityError    = "error"
	SeverityWarning  = "warning"
	SeverityInfo     = "info"
)

// Normalized alert states.
const (
	StatusFiring   = "firing"
	StatusResolved = "resolved"
)

// MaxAlerts caps the alerts normalized from one delivery; the raw payload
// still holds the rest.
const MaxAlerts = 500

// maxTypeLength bounds Event.Type, which partly comes from headers.
const maxTypeLength = 128

// Event is one delivery, normalized. Type is the provider's own event name
// where it has one ("incident.triggered", "pull_request.opened",
// "invoice.payment_failed") and "<provider>.<status>" where it has not
// ("alertmanager.firing").
type Event struct {
	Provider Provider `json:"provider"`
	Type     string   `json:"type"`
	Alerts   []Alert  `json:"alerts"`
	// Delivery is the provider's own identity of this delivery (see
	// DeliveryID), "" when the provider sends none.
	Delivery string `json:"-"`
}

// Alert is the provider-independent shape incident correlation works on:
// Fingerprint identifies one alert across its firing and resolved
// deliveries, GroupKey the group a provider batched it into.
type Alert struct {
	Source      string            `json:"source" expr:"source"`
	Title       string            `json:"title" expr:"title"`
	Severity    string            `json:"severity" expr:"severity"` // critical, error, warning, info
	Status      string            `json:"status" expr:"status"`     // firing, resolved
	Fingerprint string            `json:"fingerprint" expr:"fingerprint"`
	GroupKey    string            `json:"group_key" expr:"group_key"`
	Labels      map[string]string `json:"labels" expr:"labels"`
	Links       []string          `json:"links" expr:"links"`
	StartsAt    time.Time         `json:"starts_at" expr:"starts_at"` // zero when the provider gives none
	Summary     string            `json:"summary" expr:"summary"`
}

// Providers lists every provider Parse knows.
func Providers() []Provider {
	return []Provider{ProviderAlertmanager, ProviderGrafana, ProviderDatadog, ProviderSentry,
		ProviderPagerDuty, ProviderGitHub, ProviderGitLab, ProviderStripe, ProviderGeneric}
}

// ParseProvider validates a provider name from configuration.
func ParseProvider(s string) (Provider, error) {
	for _, p := range Providers() {
		if string(p) == s {
			return p, nil
		}
	}
	return "", newError(CodeUnsupported, "unknown provider "+strconv.Quote(s))
}

// DefaultScheme is the verification scheme a provider can actually speak,
// for pre-filling the webhook form (Alertmanager cannot send custom headers,
// so it gets bearer).
func DefaultScheme(p Provider) Scheme {
	switch p {
	case ProviderGitHub:
		return SchemeGitHub
	case ProviderGitLab:
		return SchemeGitLab
	case ProviderStripe:
		return SchemeStripe
	case ProviderPagerDuty:
		return SchemePagerDuty
	case ProviderSentry:
		return SchemeSentry
	case ProviderDatadog:
		return SchemeHeaderToken
	case ProviderGeneric:
		return SchemeHMACSHA256
	default:
		return SchemeBearer
	}
}

// Parse normalizes a delivery. h supplies event names that some providers
// send only as headers (X-GitHub-Event, X-Gitlab-Event,
// Sentry-Hook-Resource). A body that is not JSON of the expected shape is
// an *Error with CodeInvalidPayload (422).
func Parse(provider Provider, h http.Header, body []byte) (Event, error) {
	if h == nil {
		h = http.Header{}
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return Event{}, newError(CodeInvalidPayload, "body must be a JSON object")
	}
	var (
		ev  Event
		err error
	)
	switch provider {
	case ProviderAlertmanager:
		ev, err = parseAlertmanager(body)
	case ProviderGrafana:
		ev, err = parseGrafana(body)
	case ProviderDatadog:
		ev, err = parseDatadog(body)
	case ProviderSentry:
		ev, err = parseSentry(h, body)
	case ProviderPagerDuty:
		ev, err = parsePagerDuty(body)
	case ProviderGitHub:
		ev, err = parseGitHub(h, body)
	case ProviderGitLab:
		ev, err = parseGitLab(h, body)
	case ProviderStripe:
		ev, err = parseStripe(body)
	case ProviderGeneric:
		ev, err = parseGeneric(body)
	default:
		return Event{}, newError(CodeUnsupported, "unknown provider "+strconv.Quote(string(provider)))
	}
	if err != nil {
		return Event{}, err
	}
	ev.Provider = provider
	ev.Type = cut(ev.Type, maxTypeLength) // header-derived types are sender-controlled
	ev.Delivery = cleanDelivery(firstNonEmpty(ev.Delivery, deliveryHeader(provider, h)))
	if len(ev.Alerts) > MaxAlerts {
		ev.Alerts = ev.Alerts[:MaxAlerts]
	}
	for i := range ev.Alerts {
		a := &ev.Alerts[i]
		if a.Source == "" {
			a.Source = string(provider)
		}
		if a.Labels == nil {
			a.Labels = map[string]string{}
		}
		if a.Links == nil {
			a.Links = []string{}
		}
	}
	if ev.Alerts == nil {
		ev.Alerts = []Alert{}
	}
	return ev, nil
}

// decode unmarshals body into v, turning any JSON error into a 422 *Error.
func decode(provider string, body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return wrapError(CodeInvalidPayload, provider+" payload: "+jsonErrMsg(err), err)
	}
	return nil
}

// jsonErrMsg keeps decoder messages (which can quote payload values) short.
func jsonErrMsg(err error) string {
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200]
	}
	return msg
}

// text accepts a JSON string, number or boolean as text; templated
// payloads (Datadog, Sentry ids) are not consistent about quoting.
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) == 0 || string(b) == "null":
		*t = ""
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = text(s)
	case b[0] == '{' || b[0] == '[':
		*t = "" // structured where a scalar was expected: ignore rather than reject
	default:
		*t = text(b)
	}
	return nil
}

// severity maps the many spellings providers use onto our four levels;
// unknown values yield def.
func severity(s, def string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "critical", "crit", "fatal", "emergency", "emerg", "alert", "disaster", "page",
		"p1", "sev1", "sev-1", "sev0", "p0", "blocker":
		return SeverityCritical
	case "error", "err", "high", "major", "p2", "sev2", "sev-2", "failure", "failed":
		return SeverityError
	case "warning", "warn", "medium", "moderate", "minor", "average", "p3", "sev3", "sev-3":
		return SeverityWarning
	case "info", "information", "informational", "low", "notice", "debug", "ok", "success",
		"none", "unknown", "p4", "p5", "sev4", "sev5", "trivial":
		return SeverityInfo
	}
	return def
}

// resolvedWord reports whether a provider state word means "over".
func resolvedWord(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "resolved", "ok", "closed", "recovered", "recovery", "success", "succeeded",
		"normal", "fixed", "dismissed", "inactive", "merged", "passed", "paid":
		return true
	}
	return false
}

// parseTime accepts RFC 3339, "2006-01-02 15:04:05 UTC"/"-0700" (GitLab)
// and Unix seconds or milliseconds; anything else is the zero time.
func parseTime(s string) time.Time {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}
	}
	if n, ok := parseInt(s); ok {
		if n > 1e12 {
			return time.UnixMilli(n).UTC()
		}
		return time.Unix(n, 0).UTC()
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05 MST", "2006-01-02 15:04:05 -0700",
		"2006-01-02T15:04:05.999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			if t.Year() <= 1 {
				return time.Time{} // Alertmanager's "0001-01-01T00:00:00Z" means unset
			}
			return t.UTC()
		}
	}
	return time.Time{}
}

// parseInt is strconv.ParseInt(s, 10, 64) without the error value: a
// timestamp that is not a number (most are) costs no allocation.
func parseInt(s string) (int64, bool) {
	digits := s
	if len(digits) > 0 && (digits[0] == '+' || digits[0] == '-') {
		digits = digits[1:]
	}
	if digits == "" {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// links drops empty and duplicate URLs, keeping order.
func links(urls ...string) []string {
	out := []string{}
	for _, u := range urls {
		u = strings.TrimSpace(u)
		if u == "" {
			continue
		}
		dup := false
		for _, o := range out {
			dup = dup || o == u
		}
		if !dup {
			out = append(out, u)
		}
	}
	return out
}

// firstNonEmpty returns the first argument that is not blank.
func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// putLabel sets a label only when the value is non-empty.
func putLabel(m map[string]string, k, v string) {
	if v != "" {
		m[k] = v
	}
}
