package pipeline

import (
	"encoding/json"
	"time"

	"github.com/opsagent/opsagent/server/webhook"
	"github.com/opsagent/opsagent/store"
)

// maxTimelineAlerts: alerts an incident's timeline entry keeps per event.
const maxTimelineAlerts = 20

// correlation derives the incident keys and state of an event: group key
// where the provider batches alerts (Alertmanager), fingerprint otherwise;
// PagerDuty's incident events move the incident's status.
// alertsJSON is ev.Alerts already encoded (the event's stored alerts), "" if
// not at hand.
func correlation(ev webhook.Event, alertsJSON string, window time.Duration) *store.Correlation {
	c := &store.Correlation{Window: window, Severity: webhook.SeverityInfo, Title: ev.Type}
	seen := map[string]bool{}
	resolved := 0
	for i, a := range ev.Alerts {
		if fp := a.Fingerprint; fp == "" || !seen["alert:"+fp] { // an incident counts distinct alerts
			c.AlertCount++
			if fp != "" {
				seen["alert:"+fp] = true
				c.Fingerprints = append(c.Fingerprints, fp)
			}
		}
		k := ""
		switch {
		case a.GroupKey != "":
			k = "group:" + a.GroupKey
		case a.Fingerprint != "":
			k = "fp:" + a.Fingerprint
		}
		if k != "" && !seen[k] && len(c.Keys) < 50 {
			seen[k] = true
			c.Keys = append(c.Keys, k)
		}
		if i == 0 && a.Title != "" {
			c.Title = a.Title
		}
		if severityRank(a.Severity) > severityRank(c.Severity) {
			c.Severity = a.Severity
		}
		if a.Status == webhook.StatusResolved {
			resolved++
		} else {
			c.Firing = true
		}
	}
	switch {
	case ev.Type == "incident.acknowledged":
		c.Transition = store.IncidentAcknowledged
	case ev.Type == "incident.resolved":
		c.Transition = store.IncidentResolved
	case len(ev.Alerts) > 0 && resolved == len(ev.Alerts):
		c.Transition = store.IncidentResolved
	}
	if len(c.Keys) == 0 {
		return nil // nothing to correlate on: every event stands alone
	}
	if len(c.Title) > 200 {
		c.Title = c.Title[:200]
	}
	if alertsJSON != "" && len(ev.Alerts) <= maxTimelineAlerts {
		c.Alerts = alertsJSON // the same JSON: no second encoding per event
	} else {
		alerts, _ := json.Marshal(ev.Alerts[:min(len(ev.Alerts), maxTimelineAlerts)])
		c.Alerts = string(alerts)
	}
	return c
}

func severityRank(s string) int {
	switch s {
	case webhook.SeverityCritical:
		return 4
	case webhook.SeverityError:
		return 3
	case webhook.SeverityWarning:
		return 2
	case webhook.SeverityInfo:
		return 1
	}
	return 0
}
