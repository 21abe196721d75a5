package webhook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
)

// Field names the generic provider looks for, in order of preference. A
// sender that nests its alert under "alert", "data", "event" or
// "incident" is looked into one level deep.
var (
	genericTitleKeys    = []string{"title", "summary", "subject", "name", "alertname", "alert_name", "message", "text", "description", "event"}
	genericSummaryKeys  = []string{"summary", "description", "message", "body", "details", "text"}
	genericSeverityKeys = []string{"severity", "level", "priority", "urgency"}
	genericStatusKeys   = []string{"status", "state"}
	genericIDKeys       = []string{"fingerprint", "dedup_key", "dedupe_key", "incident_key", "alert_id", "id"}
	genericGroupKeys    = []string{"group_key", "groupKey", "group", "service"}
	genericTimeKeys     = []string{"starts_at", "startsAt", "started_at", "timestamp", "time", "created_at", "date"}
	genericLinkKeys     = []string{"url", "link", "html_url", "href", "runbook_url", "dashboard_url"}
	genericTypeKeys     = []string{"event_type", "type", "event"}
	genericNestKeys     = []string{"alert", "data", "event", "incident", "payload"}
)

func parseGeneric(body []byte) (Event, error) {
	var top map[string]any
	if err := decode("generic", body, &top); err != nil {
		return Event{}, err
	}
	if top == nil {
		return Event{}, newError(CodeInvalidPayload, "generic payload must be a JSON object")
	}
	objs := []map[string]any{top}
	for _, k := range genericNestKeys {
		if m, ok := top[k].(map[string]any); ok {
			objs = append(objs, m)
		}
	}
	pick := func(keys []string) string {
		for _, o := range objs {
			for _, k := range keys {
				if s := scalarText(o[k]); s != "" {
					return s
				}
			}
		}
		return ""
	}
	title := firstNonEmpty(pick(genericTitleKeys), "webhook event")
	if len(title) > 300 {
		title = title[:300]
	}
	status := StatusFiring
	if resolvedWord(pick(genericStatusKeys)) {
		status = StatusResolved
	}
	labels := map[string]string{}
	for _, k := range []string{"labels", "tags"} {
		if m, ok := top[k].(map[string]any); ok {
			for lk, lv := range m {
				if s := scalarText(lv); s != "" && len(labels) < 64 {
					labels[lk] = s
				}
			}
		}
	}
	for k, v := range top {
		if s := scalarText(v); s != "" && len(s) <= 256 && len(labels) < 64 {
			if _, taken := labels[k]; !taken {
				labels[k] = s
			}
		}
	}
	fp := pick(genericIDKeys)
	if fp == "" {
		// No identity given: alerts with the same title correlate.
		sum := sha256.Sum256([]byte(title))
		fp = hex.EncodeToString(sum[:8])
	}
	var urls []string
	for _, o := range objs {
		for _, k := range genericLinkKeys {
			if s := scalarText(o[k]); strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
				urls = append(urls, s)
			}
		}
	}
	typ := eventWord(pick(genericTypeKeys))
	if typ == "" || len(typ) > 100 {
		typ = "generic." + status
	}
	return Event{Type: typ, Alerts: []Alert{{
		Title:       title,
		Severity:    severity(pick(genericSeverityKeys), SeverityWarning),
		Status:      status,
		Fingerprint: "generic-" + fp,
		GroupKey:    pick(genericGroupKeys),
		Labels:      labels,
		Links:       links(urls...),
		StartsAt:    parseTime(pick(genericTimeKeys)),
		Summary:     pick(genericSummaryKeys),
	}}}, nil
}

// scalarText renders strings, numbers and booleans; structures are "".
func scalarText(v any) string {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}
