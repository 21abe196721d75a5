package webhook

import (
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Env is what a routing condition sees. Conditions work on a bounded view
// of the delivery (long strings cut, long arrays and big objects trimmed),
// which is what keeps their cost bounded; build it with NewEnv.
type Env struct {
	// Payload is the delivery body decoded as JSON (objects are maps,
	// numbers float64).
	Payload any `expr:"payload"`
	// Alert is the first normalized alert (zero Alert when there is none).
	Alert Alert `expr:"alert"`
	// Alerts are all normalized alerts.
	Alerts []Alert `expr:"alerts"`
	// Event is the event type, e.g. "alertmanager.firing", "incident.triggered".
	Event string `expr:"event"`
	// Provider is the provider name, e.g. "github".
	Provider string `expr:"provider"`
	// Headers are the request headers, names lowercased, repeated values
	// joined with ", ", credential headers removed.
	Headers map[string]string `expr:"headers"`
}

// Bounds of the view conditions evaluate on.
const (
	envMaxString      = 1024     // bytes per string
	envMaxStringTotal = 64 << 10 // bytes of strings in the whole payload view
	envMaxArray       = 100      // elements per array
	envMaxObject      = 200      // keys per object
	envMaxDepth       = 16       // nesting; deeper values become null
	envMaxAlerts      = 100      // alerts (Alert is the first of them)
	envMaxHeaders     = 64       // headers
	envMaxLabels      = 64       // labels per alert
	envMaxLinks       = 10       // links per alert
	envMaxBody        = 8 << 20  // bodies above this are not decoded at all
	envMaxTotalValues = 20 << 10 // values in the whole payload view
)

// credentialHeaders never reach conditions (or, through them, logs).
var credentialHeaders = map[string]bool{
	"authorization": true, "proxy-authorization": true, "cookie": true, "set-cookie": true,
	"x-webhook-token": true, "x-webhook-signature": true, "x-hub-signature": true,
	"x-hub-signature-256": true, "x-gitlab-token": true, "stripe-signature": true,
	"x-pagerduty-signature": true, "sentry-hook-signature": true, "x-api-key": true,
	"dd-api-key": true, "x-grafana-alerting-signature": true,
}

// IsCredentialHeader reports whether a header carries a credential and must
// be dropped before headers are stored, shown or handed to conditions.
func IsCredentialHeader(name string) bool {
	// ASCII names (all that net/http accepts) are lower-cased on the stack:
	// every stored delivery asks this of each of its headers.
	var buf [32]byte
	if len(name) > len(buf) {
		return credentialHeaders[strings.ToLower(name)] // longer than any credential header
	}
	b := buf[:len(name)]
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 0x80:
			return credentialHeaders[strings.ToLower(name)] // Unicode case rules (the Kelvin sign is a k)
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return credentialHeaders[string(b)]
}

// NewEnv builds the condition environment for one delivery. ev is what
// Parse returned for body; h the request headers. A body that is not JSON
// yields a nil Payload rather than an error, so conditions on headers and
// event still work.
func NewEnv(ev Event, body []byte, h http.Header) Env {
	env := Env{Event: ev.Type, Provider: string(ev.Provider), Headers: map[string]string{}}
	if len(body) <= envMaxBody {
		var v any
		if json.Unmarshal(body, &v) == nil {
			b := envBudget{strings: envMaxStringTotal, values: envMaxTotalValues}
			env.Payload = b.view(v, 0)
		}
	}
	n := min(len(ev.Alerts), envMaxAlerts)
	env.Alerts = make([]Alert, n)
	for i := range n {
		env.Alerts[i] = boundedAlert(ev.Alerts[i])
	}
	if n > 0 {
		env.Alert = env.Alerts[0]
	} else {
		env.Alert = Alert{Labels: map[string]string{}, Links: []string{}}
	}
	for name, vals := range h {
		if len(env.Headers) == envMaxHeaders {
			break
		}
		if IsCredentialHeader(name) {
			continue
		}
		env.Headers[strings.ToLower(name)] = cut(strings.Join(vals, ", "), envMaxString)
	}
	return env
}

type envBudget struct{ strings, values int }

// view copies v within the budget.
func (b *envBudget) view(v any, depth int) any {
	if b.values <= 0 || depth > envMaxDepth {
		return nil
	}
	b.values--
	switch x := v.(type) {
	case string:
		s := cut(x, min(envMaxString, max(b.strings, 0)))
		b.strings -= len(s)
		return s
	case []any:
		out := make([]any, 0, min(len(x), envMaxArray))
		for _, e := range x[:min(len(x), envMaxArray)] {
			out = append(out, b.view(e, depth+1))
		}
		return out
	case map[string]any:
		out := make(map[string]any, min(len(x), envMaxObject))
		for k, e := range x {
			if len(out) == envMaxObject {
				break
			}
			out[cut(k, envMaxString)] = b.view(e, depth+1)
		}
		return out
	}
	return v // numbers, booleans, null
}

func boundedAlert(a Alert) Alert {
	out := a
	out.Title, out.Summary = cut(a.Title, envMaxString), cut(a.Summary, envMaxString)
	out.Fingerprint, out.GroupKey = cut(a.Fingerprint, envMaxString), cut(a.GroupKey, envMaxString)
	out.Labels = make(map[string]string, min(len(a.Labels), envMaxLabels))
	for k, v := range a.Labels {
		if len(out.Labels) == envMaxLabels {
			break
		}
		out.Labels[cut(k, envMaxString)] = cut(v, envMaxString)
	}
	out.Links = make([]string, 0, min(len(a.Links), envMaxLinks))
	for _, l := range a.Links[:min(len(a.Links), envMaxLinks)] {
		out.Links = append(out.Links, cut(l, envMaxString))
	}
	return out
}

// cut shortens s to at most n bytes on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
