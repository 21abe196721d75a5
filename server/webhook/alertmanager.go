package webhook

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
)

// amPayload is the Alertmanager webhook payload, version 4. Grafana's
// unified alerting sends the same shape (version "1") with extra fields,
// so both parsers share it.
type amPayload struct {
	Version           text              `json:"version"`
	GroupKey          string            `json:"groupKey"`
	Status            string            `json:"status"`
	Receiver          string            `json:"receiver"`
	GroupLabels       map[string]string `json:"groupLabels"` // unused: the fast reader (amdecode.go) does not keep it
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
	ExternalURL       string            `json:"externalURL"`
	Alerts            []amAlert         `json:"alerts"`
	// Grafana only.
	Title   string `json:"title"`
	State   string `json:"state"`
	Message string `json:"message"`
}

type amAlert struct {
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     string            `json:"startsAt"`
	EndsAt       string            `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
	// Grafana only.
	DashboardURL string `json:"dashboardURL"`
	PanelURL     string `json:"panelURL"`
	SilenceURL   string `json:"silenceURL"`
	ValueString  string `json:"valueString"`
}

func parseAlertmanager(body []byte) (Event, error) {
	var p amPayload
	if err := decodeAM("alertmanager", body, &p); err != nil {
		return Event{}, err
	}
	if p.Alerts == nil && p.Status == "" {
		return Event{}, newError(CodeInvalidPayload, "alertmanager payload has neither status nor alerts")
	}
	typ := "alertmanager.firing" // "alertmanager." + groupStatus, without the concatenation
	if groupStatus(p.Status) == StatusResolved {
		typ = "alertmanager.resolved"
	}
	return Event{Type: typ, Alerts: amAlerts(p, "alertmanager")}, nil
}

func groupStatus(s string) string {
	if resolvedWord(s) {
		return StatusResolved
	}
	return StatusFiring
}

// amAlerts normalizes the alerts of an Alertmanager-shaped payload.
func amAlerts(p amPayload, source string) []Alert {
	out := make([]Alert, 0, min(len(p.Alerts), MaxAlerts))
	for _, a := range p.Alerts {
		if len(out) == MaxAlerts {
			break
		}
		labels := a.Labels // the decoded payload is not used again: no copy
		if labels == nil {
			labels = map[string]string{}
		}
		ann := a.Annotations
		status := a.Status
		if status == "" {
			status = p.Status
		}
		fp := a.Fingerprint
		if fp == "" {
			fp = labelFingerprint(labels)
		}
		out = append(out, Alert{
			Source:      source,
			Title:       firstNonEmpty(labels["alertname"], ann["summary"], p.Title, "alert"),
			Severity:    severity(firstNonEmpty(labels["severity"], labels["priority"], p.CommonLabels["severity"]), SeverityWarning),
			Status:      groupStatus(status),
			Fingerprint: fp,
			GroupKey:    p.GroupKey,
			Labels:      labels,
			Links: links(a.GeneratorURL, ann["runbook_url"], ann["dashboard_url"], a.DashboardURL,
				a.PanelURL, ann["runbook"]),
			StartsAt: parseTime(a.StartsAt),
			Summary:  firstNonEmpty(ann["summary"], ann["description"], ann["message"], a.ValueString, p.CommonAnnotations["summary"]),
		})
	}
	return out
}

// labelFingerprint stands in for a missing fingerprint: a digest of the
// sorted label set, which is what Alertmanager itself hashes.
func labelFingerprint(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0xff)
		b.WriteString(labels[k])
		b.WriteByte(0xff)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:8])
}
