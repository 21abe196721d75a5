package webhook

import (
	"encoding/json"
	"net/http"
	"strings"
)

// sentryPayload covers the Sentry integration-platform webhooks (issue,
// event_alert, metric_alert resources, named by the Sentry-Hook-Resource
// header) and the legacy webhooks plugin, which posts the issue fields at
// the top level.
type sentryPayload struct {
	Action string `json:"action"`
	Data   struct {
		Issue         *sentryIssue `json:"issue"`
		Event         *sentryEvent `json:"event"`
		TriggeredRule string       `json:"triggered_rule"`
		MetricAlert   *struct {
			ID          text   `json:"id"`
			Title       string `json:"title"`
			DateStarted string `json:"date_started"`
			AlertRule   struct {
				ID   text   `json:"id"`
				Name string `json:"name"`
			} `json:"alert_rule"`
		} `json:"metric_alert"`
		DescriptionText  string `json:"description_text"`
		DescriptionTitle string `json:"description_title"`
		WebURL           string `json:"web_url"`
	} `json:"data"`

	// Legacy plugin fields.
	ID              text         `json:"id"`
	ProjectSlug     string       `json:"project_slug"`
	Level           string       `json:"level"`
	Culprit         string       `json:"culprit"`
	Message         string       `json:"message"`
	URL             string       `json:"url"`
	TriggeringRules []string     `json:"triggering_rules"`
	Event           *sentryEvent `json:"event"`
}

type sentryIssue struct {
	ID        text   `json:"id"`
	ShortID   string `json:"shortId"`
	Title     string `json:"title"`
	Culprit   string `json:"culprit"`
	Level     string `json:"level"`
	Status    string `json:"status"`
	FirstSeen string `json:"firstSeen"`
	WebURL    string `json:"web_url"`
	Permalink string `json:"permalink"`
	Project   struct {
		Slug string `json:"slug"`
	} `json:"project"`
}

type sentryEvent struct {
	EventID  string          `json:"event_id"`
	IssueID  text            `json:"issue_id"`
	GroupID  text            `json:"group_id"`
	Title    string          `json:"title"`
	Message  string          `json:"message"`
	Level    string          `json:"level"`
	Culprit  string          `json:"culprit"`
	Datetime string          `json:"datetime"`
	WebURL   string          `json:"web_url"`
	Tags     json.RawMessage `json:"tags"`
}

func parseSentry(h http.Header, body []byte) (Event, error) {
	var p sentryPayload
	if err := decode("sentry", body, &p); err != nil {
		return Event{}, err
	}
	resource := strings.ToLower(strings.TrimSpace(h.Get("Sentry-Hook-Resource")))
	switch {
	case resource == "" && p.Data.Issue != nil:
		resource = "issue"
	case resource == "" && p.Data.Event != nil:
		resource = "event_alert"
	case resource == "" && p.Data.MetricAlert != nil:
		resource = "metric_alert"
	}
	a := Alert{Labels: map[string]string{}}
	switch {
	case p.Data.Issue != nil:
		i := p.Data.Issue
		a.Title, a.Summary = i.Title, i.Culprit
		a.Severity = severity(i.Level, SeverityError)
		a.Status = sentryStatus(p.Action, i.Status)
		a.Fingerprint, a.GroupKey = "sentry-issue-"+string(i.ID), i.Project.Slug
		a.Links, a.StartsAt = links(i.WebURL, i.Permalink), parseTime(i.FirstSeen)
		putLabel(a.Labels, "project", i.Project.Slug)
		putLabel(a.Labels, "short_id", i.ShortID)
		putLabel(a.Labels, "level", i.Level)
	case p.Data.Event != nil:
		sentryFromEvent(&a, p.Data.Event)
		putLabel(a.Labels, "rule", p.Data.TriggeredRule)
		a.GroupKey = p.Data.TriggeredRule
	case p.Data.MetricAlert != nil:
		m := p.Data.MetricAlert
		a.Title = firstNonEmpty(p.Data.DescriptionTitle, m.Title, m.AlertRule.Name)
		a.Summary = p.Data.DescriptionText
		a.Severity = severity(p.Action, SeverityWarning)
		a.Status = sentryStatus(p.Action, "")
		a.Fingerprint, a.GroupKey = "sentry-metric-alert-"+string(m.ID), "sentry-rule-"+string(m.AlertRule.ID)
		a.Links, a.StartsAt = links(p.Data.WebURL), parseTime(m.DateStarted)
		putLabel(a.Labels, "rule", m.AlertRule.Name)
	case p.ID != "" || p.Event != nil:
		resource, p.Action = "alert", "" // legacy plugin
		if p.Event != nil {
			sentryFromEvent(&a, p.Event)
		}
		a.Title = firstNonEmpty(a.Title, p.Message, p.Culprit)
		a.Summary = firstNonEmpty(p.Culprit, a.Summary)
		a.Severity = severity(p.Level, firstNonEmpty(a.Severity, SeverityError))
		a.Fingerprint, a.GroupKey = "sentry-issue-"+string(p.ID), p.ProjectSlug
		a.Links = links(p.URL)
		putLabel(a.Labels, "project", p.ProjectSlug)
		putLabel(a.Labels, "rule", strings.Join(p.TriggeringRules, ","))
	default:
		return Event{}, newError(CodeInvalidPayload, "sentry payload has no issue, event or metric_alert")
	}
	if a.Status == "" {
		a.Status = StatusFiring
	}
	typ := "sentry." + firstNonEmpty(eventWord(resource), "alert")
	if p.Action != "" {
		typ += "." + eventWord(p.Action)
	}
	return Event{Type: typ, Alerts: []Alert{a}}, nil
}

func sentryFromEvent(a *Alert, e *sentryEvent) {
	a.Title = firstNonEmpty(e.Title, e.Message, "sentry event")
	a.Summary = e.Culprit
	a.Severity = severity(e.Level, SeverityError)
	a.Fingerprint = "sentry-issue-" + firstNonEmpty(string(e.IssueID), string(e.GroupID), e.EventID)
	a.Links, a.StartsAt = links(e.WebURL), parseTime(e.Datetime)
	for k, v := range sentryTags(e.Tags) {
		a.Labels[k] = v
	}
	putLabel(a.Labels, "level", e.Level)
	putLabel(a.Labels, "event_id", e.EventID)
}

// sentryStatus: issue actions "resolved"/"ignored"/"archived" and metric
// alert action "resolved" end an alert; everything else keeps it firing.
func sentryStatus(action, status string) string {
	switch strings.ToLower(action) {
	case "resolved", "ignored", "archived":
		return StatusResolved
	case "unresolved", "created", "triggered", "critical", "warning":
		return StatusFiring
	}
	if strings.EqualFold(status, "resolved") {
		return StatusResolved
	}
	return StatusFiring
}

// sentryTags reads tags sent either as [["k","v"], ...] or as
// [{"key":"k","value":"v"}, ...].
func sentryTags(raw json.RawMessage) map[string]string {
	out := map[string]string{}
	var pairs [][]string
	if json.Unmarshal(raw, &pairs) == nil {
		for _, p := range pairs {
			if len(p) == 2 && len(out) < 64 {
				out[p[0]] = p[1]
			}
		}
		return out
	}
	var objs []struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	}
	if json.Unmarshal(raw, &objs) == nil {
		for _, o := range objs {
			if len(out) < 64 {
				out[o.Key] = o.Value
			}
		}
	}
	return out
}
