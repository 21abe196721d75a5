package webhook

import (
	"strings"
)

// ddPayload covers Datadog's default webhook template plus the template
// variables teams commonly add ($ALERT_TRANSITION, $ALERT_ID, $TAGS, ...).
// Datadog payloads are user-written templates, so every field is optional
// and numbers may arrive quoted or not.
type ddPayload struct {
	ID              text   `json:"id"`
	Title           string `json:"title"`
	Body            string `json:"body"`
	EventType       string `json:"event_type"`
	Date            text   `json:"date"`
	LastUpdated     text   `json:"last_updated"`
	AlertID         text   `json:"alert_id"`
	AlertTitle      string `json:"alert_title"`
	AlertTransition string `json:"alert_transition"` // Triggered, Recovered, Warn, Re-Triggered, No Data, Renotify
	AlertStatus     string `json:"alert_status"`
	AlertType       string `json:"alert_type"`     // error, warning, success, info
	AlertPriority   string `json:"alert_priority"` // P1..P5
	AlertScope      string `json:"alert_scope"`
	AlertCycleKey   text   `json:"alert_cycle_key"`
	AggregKey       string `json:"aggreg_key"`
	Priority        string `json:"priority"` // normal, low
	Hostname        string `json:"hostname"`
	Link            string `json:"link"`
	URL             string `json:"url"`
	Tags            text   `json:"tags"` // "env:prod,service:api"
	Org             struct {
		ID   text   `json:"id"`
		Name string `json:"name"`
	} `json:"org"`
}

func parseDatadog(body []byte) (Event, error) {
	var p ddPayload
	if err := decode("datadog", body, &p); err != nil {
		return Event{}, err
	}
	title := firstNonEmpty(p.AlertTitle, p.Title)
	if title == "" && p.Body == "" && p.AlertID == "" {
		return Event{}, newError(CodeInvalidPayload, "datadog payload has no title, body or alert_id")
	}
	transition := firstNonEmpty(p.AlertTransition, titleTransition(p.Title))
	status := StatusFiring
	if isDDRecovery(transition) || strings.EqualFold(p.AlertType, "success") {
		status = StatusResolved
	}
	sev := severity(p.AlertPriority, "")
	if sev == "" {
		sev = severity(p.AlertType, SeverityWarning)
		if strings.EqualFold(transition, "Warn") {
			sev = SeverityWarning
		}
	}
	labels := ddTags(string(p.Tags))
	putLabel(labels, "host", p.Hostname)
	putLabel(labels, "monitor_id", string(p.AlertID))
	putLabel(labels, "transition", transition)
	putLabel(labels, "scope", p.AlertScope)
	putLabel(labels, "org", p.Org.Name)
	putLabel(labels, "priority", p.AlertPriority)

	fp := "datadog-" + firstNonEmpty(string(p.AlertID), string(p.ID))
	if p.AlertScope != "" {
		fp += "-" + p.AlertScope
	}
	typ := "datadog." + firstNonEmpty(eventWord(transition), eventWord(p.EventType), status)
	return Event{Type: typ, Alerts: []Alert{{
		Title:       stripDDPrefix(title),
		Severity:    sev,
		Status:      status,
		Fingerprint: fp,
		GroupKey:    firstNonEmpty(p.AggregKey, string(p.AlertCycleKey), string(p.AlertID)),
		Labels:      labels,
		Links:       links(p.Link, p.URL),
		StartsAt:    parseTime(firstNonEmpty(string(p.Date), string(p.LastUpdated))),
		Summary:     strings.TrimSpace(strings.TrimPrefix(p.Body, "%%%")),
	}}}, nil
}

func isDDRecovery(t string) bool {
	t = strings.ToLower(t)
	return t == "recovered" || t == "recovery" || t == "ok" || t == "resolved"
}

// titleTransition reads the "[Triggered]" prefix Datadog puts on titles
// when the template has no $ALERT_TRANSITION field. A leading priority
// bracket ("[P1] [Triggered on {host:a}]") is skipped.
func titleTransition(title string) string {
	title = strings.TrimSpace(title)
	for strings.HasPrefix(title, "[") {
		end := strings.IndexByte(title, ']')
		if end < 0 {
			return ""
		}
		word := title[1:end]
		title = strings.TrimSpace(title[end+1:])
		if len(word) == 2 && (word[0] == 'P' || word[0] == 'p') {
			continue
		}
		word, _, _ = strings.Cut(word, " on ")
		return word
	}
	return ""
}

func stripDDPrefix(title string) string {
	for strings.HasPrefix(title, "[") {
		end := strings.IndexByte(title, ']')
		if end < 0 {
			break
		}
		title = strings.TrimSpace(title[end+1:])
	}
	return title
}

// eventWord turns "Re-Triggered" or "No Data" into "re_triggered",
// "no_data" for use in an event type.
func eventWord(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.NewReplacer(" ", "_", "-", "_").Replace(s)
}

// ddTags splits Datadog's "key:value,key2:value2,bare" tag string.
func ddTags(s string) map[string]string {
	out := map[string]string{}
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		k, v, _ := strings.Cut(t, ":")
		if len(out) < 64 {
			out[k] = v
		}
	}
	return out
}
