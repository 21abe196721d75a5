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
	GroupLabels       map[string]string `json:"groupLabels"`       // unused: the fast reader (amdecode.go) does not keep it
	CommonLabels      map[string]string `json:"commonLabels"`      // encoding/json's; see pick
	CommonAnnotations map[string]string `json:"commonAnnotations"` // encoding/json's; see pick
	ExternalURL       string            `json:"externalURL"`
	Alerts            []amAlert         `json:"alerts"`
	// Grafana only.
	Title   string `json:"title"`
	State   string `json:"state"`
	Message string `json:"message"`

	// What amAlerts reads of the common maps: the fast reader keeps only
	// these (no map per payload); pick moves encoding/json's maps here.
	commonSeverity, commonSummary string
}

type amAlert struct {
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"` // encoding/json's; see ann
	StartsAt     string            `json:"startsAt"`
	EndsAt       string            `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
	// Grafana only.
	DashboardURL string `json:"dashboardURL"`
	PanelURL     string `json:"panelURL"`
	SilenceURL   string `json:"silenceURL"`
	ValueString  string `json:"valueString"`

	ann amAnnotations // what amAlerts reads of Annotations (see amPayload)
}

// amAnnotations are the annotations amAlerts reads.
type amAnnotations struct {
	summary, description, message, runbookURL, dashboardURL, runbook string
}

// set keeps v when key is one amAlerts reads (a repeated key: the last
// wins, as in a map).
func (a *amAnnotations) set(key, v string) {
	switch key {
	case "summary":
		a.summary = v
	case "description":
		a.description = v
	case "message":
		a.message = v
	case "runbook_url":
		a.runbookURL = v
	case "dashboard_url":
		a.dashboardURL = v
	case "runbook":
		a.runbook = v
	}
}

// pick moves what amAlerts reads out of encoding/json's maps into the
// fields the fast reader fills, and drops the maps: both paths end alike.
func (p *amPayload) pick() {
	if p.CommonLabels != nil {
		p.commonSeverity = p.CommonLabels["severity"]
		p.CommonLabels = nil
	}
	if p.CommonAnnotations != nil {
		p.commonSummary = p.CommonAnnotations["summary"]
		p.CommonAnnotations = nil
	}
	for i := range p.Alerts {
		a := &p.Alerts[i]
		for k, v := range a.Annotations {
			a.ann.set(k, v)
		}
		a.Annotations = nil
	}
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
		ann := &a.ann
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
			Title:       firstNonEmpty(labels["alertname"], ann.summary, p.Title, "alert"),
			Severity:    severity(firstNonEmpty(labels["severity"], labels["priority"], p.commonSeverity), SeverityWarning),
			Status:      groupStatus(status),
			Fingerprint: fp,
			GroupKey:    p.GroupKey,
			Labels:      labels,
			Links: links(a.GeneratorURL, ann.runbookURL, ann.dashboardURL, a.DashboardURL,
				a.PanelURL, ann.runbook),
			StartsAt: parseTime(a.StartsAt),
			Summary:  firstNonEmpty(ann.summary, ann.description, ann.message, a.ValueString, p.commonSummary),
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
