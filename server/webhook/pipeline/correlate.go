package pipeline

import (
	"encoding/json"
	"slices"
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
	// The fingerprints seen are c.Fingerprints and the keys seen c.Keys
	// (at most 50): a map only for the fingerprints of large batches.
	var seenFP map[string]bool
	if len(ev.Alerts) > 16 {
		seenFP = map[string]bool{}
	}
	resolved := 0
	for i, a := range ev.Alerts {
		fp := a.Fingerprint
		if fp == "" || !(seenFP[fp] || seenFP == nil && slices.Contains(c.Fingerprints, fp)) { // an incident counts distinct alerts
			c.AlertCount++
			if fp != "" {
				if seenFP != nil {
					seenFP[fp] = true
				}
				c.Fingerprints = append(c.Fingerprints, fp)
			}
		}
		prefix, v := "", ""
		switch {
		case a.GroupKey != "":
			prefix, v = "group:", a.GroupKey
		case fp != "":
			prefix, v = "fp:", fp
		}
		if v != "" && len(c.Keys) < 50 && !slices.ContainsFunc(c.Keys, func(k string) bool {
			return len(k) == len(prefix)+len(v) && k[:len(prefix)] == prefix && k[len(prefix):] == v
		}) {
			c.Keys = append(c.Keys, prefix+v)
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
