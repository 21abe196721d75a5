package tools

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// AlertmanagerAlerts is alertmanager_alerts: the alerts Alertmanager holds.
func AlertmanagerAlerts(d QueryDeps) *Query {
	return d.query(&Query{Name: "alertmanager_alerts", Kind: "alertmanager",
		Description: "List the alerts an Alertmanager holds (API v2), optionally filtered by label matchers such as " +
			`alertname="HighLatency" or severity=~"crit.*". Read-only.`,
		Params: map[string]any{
			"filter":    map[string]any{"type": "array", "maxItems": 20, "items": str("label matcher", "maxLength", 512)},
			"silenced":  map[string]any{"type": "boolean", "description": "include silenced alerts (default false)"},
			"inhibited": map[string]any{"type": "boolean", "description": "include inhibited alerts (default false)"},
		},
		Build: func(m map[string]any, _ time.Time) (string, url.Values, error) {
			v := url.Values{"active": {"true"}, "silenced": {boolArg(m, "silenced")}, "inhibited": {boolArg(m, "inhibited")}}
			if fs, ok := m["filter"].([]any); ok {
				for _, f := range fs {
					v.Add("filter", fmt.Sprint(f))
				}
			}
			return "/api/v2/alerts", v, nil
		},
		Format: formatAlerts})
}

// AlertmanagerSilences is alertmanager_silences: the silences in place.
func AlertmanagerSilences(d QueryDeps) *Query {
	return d.query(&Query{Name: "alertmanager_silences", Kind: "alertmanager",
		Description: "List an Alertmanager's silences (API v2) with their matchers, state, author and comment. Read-only.",
		Params:      map[string]any{"filter": map[string]any{"type": "array", "maxItems": 20, "items": str("label matcher", "maxLength", 512)}},
		Build: func(m map[string]any, _ time.Time) (string, url.Values, error) {
			v := url.Values{}
			if fs, ok := m["filter"].([]any); ok {
				for _, f := range fs {
					v.Add("filter", fmt.Sprint(f))
				}
			}
			return "/api/v2/silences", v, nil
		},
		Format: formatSilences})
}

func boolArg(m map[string]any, k string) string {
	if b, _ := m[k].(bool); b {
		return "true"
	}
	return "false"
}

type amAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    string            `json:"startsAt"`
	Status      struct {
		State       string   `json:"state"`
		SilencedBy  []string `json:"silencedBy"`
		InhibitedBy []string `json:"inhibitedBy"`
	} `json:"status"`
	Fingerprint string `json:"fingerprint"`
}

func formatAlerts(body []byte) (string, error) {
	var alerts []amAlert
	if err := json.Unmarshal(body, &alerts); err != nil {
		return "", err
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%d alerts\n", len(alerts))
	for _, a := range alerts {
		fmt.Fprintf(&out, "- %s [%s] since %s %s\n", a.Labels["alertname"], a.Status.State, a.StartsAt, seriesName(a.Labels))
		for _, k := range []string{"summary", "description", "runbook_url"} {
			if v := a.Annotations[k]; v != "" {
				fmt.Fprintf(&out, "    %s: %s\n", k, oneLine(v))
			}
		}
	}
	return out.String(), nil
}

type amSilence struct {
	ID       string `json:"id"`
	Matchers []struct {
		Name    string `json:"name"`
		Value   string `json:"value"`
		IsRegex bool   `json:"isRegex"`
		IsEqual *bool  `json:"isEqual"`
	} `json:"matchers"`
	StartsAt  string `json:"startsAt"`
	EndsAt    string `json:"endsAt"`
	CreatedBy string `json:"createdBy"`
	Comment   string `json:"comment"`
	Status    struct {
		State string `json:"state"`
	} `json:"status"`
}

// matcherString writes one Alertmanager matcher as its own syntax does
// (name="v", name=~"re", name!="v", name!~"re"), for a listing and for what
// an approver sees of a new silence alike.
func matcherString(name, value string, isRegex bool, isEqual *bool) string {
	op := "="
	if isRegex {
		op = "=~"
	}
	if isEqual != nil && !*isEqual {
		op = strings.Replace(op, "=", "!", 1)
	}
	return fmt.Sprintf("%s%s%q", name, op, value)
}

func formatSilences(body []byte) (string, error) {
	var ss []amSilence
	if err := json.Unmarshal(body, &ss); err != nil {
		return "", err
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%d silences\n", len(ss))
	for _, s := range ss {
		ms := make([]string, len(s.Matchers))
		for i, m := range s.Matchers {
			ms[i] = matcherString(m.Name, m.Value, m.IsRegex, m.IsEqual)
		}
		fmt.Fprintf(&out, "- %s [%s] {%s} %s..%s by %s: %s\n", s.ID, s.Status.State, strings.Join(ms, ", "), s.StartsAt,
			s.EndsAt, s.CreatedBy, oneLine(s.Comment))
	}
	return out.String(), nil
}
