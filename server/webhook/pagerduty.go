package webhook

import "strings"

// pdPayload is a PagerDuty V3 webhook: one event envelope whose data is
// the incident (or service, ...) it is about.
type pdPayload struct {
	Event *struct {
		ID           string `json:"id"`
		EventType    string `json:"event_type"`
		ResourceType string `json:"resource_type"`
		OccurredAt   string `json:"occurred_at"`
		Data         struct {
			ID          string `json:"id"`
			Type        string `json:"type"`
			HTMLURL     string `json:"html_url"`
			Number      text   `json:"number"`
			Status      string `json:"status"`
			IncidentKey string `json:"incident_key"`
			CreatedAt   string `json:"created_at"`
			Title       string `json:"title"`
			Urgency     string `json:"urgency"`
			Service     pdRef  `json:"service"`
			Priority    *pdRef `json:"priority"`
			Incident    *pdRef `json:"incident"` // on incident.annotated etc.
		} `json:"data"`
	} `json:"event"`
}

type pdRef struct {
	ID      string `json:"id"`
	Summary string `json:"summary"`
	HTMLURL string `json:"html_url"`
}

func parsePagerDuty(body []byte) (Event, error) {
	var p pdPayload
	if err := decode("pagerduty", body, &p); err != nil {
		return Event{}, err
	}
	if p.Event == nil || p.Event.EventType == "" {
		return Event{}, newError(CodeInvalidPayload, "pagerduty payload has no event.event_type (only V3 webhooks are supported)")
	}
	e, d := p.Event, p.Event.Data
	incidentID, incidentTitle, incidentURL := d.ID, d.Title, d.HTMLURL
	if d.Incident != nil && d.Incident.ID != "" && d.Type != "incident" {
		// Sub-resources (notes, responders, ...) point at their incident.
		incidentID, incidentTitle, incidentURL = d.Incident.ID, d.Incident.Summary, d.Incident.HTMLURL
	}
	status := StatusFiring
	if e.EventType == "incident.resolved" || strings.EqualFold(d.Status, "resolved") {
		status = StatusResolved
	}
	sev := ""
	if d.Priority != nil {
		sev = severity(d.Priority.Summary, "")
	}
	if sev == "" {
		switch strings.ToLower(d.Urgency) {
		case "high":
			sev = SeverityCritical
		case "low":
			sev = SeverityWarning
		default:
			sev = SeverityError
		}
	}
	labels := map[string]string{}
	putLabel(labels, "service", d.Service.Summary)
	putLabel(labels, "service_id", d.Service.ID)
	putLabel(labels, "urgency", d.Urgency)
	putLabel(labels, "incident_status", d.Status)
	putLabel(labels, "number", string(d.Number))
	if d.Priority != nil {
		putLabel(labels, "priority", d.Priority.Summary)
	}
	return Event{Type: e.EventType, Delivery: e.ID, Alerts: []Alert{{
		Title:       firstNonEmpty(incidentTitle, d.Service.Summary, e.EventType),
		Severity:    sev,
		Status:      status,
		Fingerprint: "pagerduty-" + firstNonEmpty(incidentID, e.ID),
		GroupKey:    firstNonEmpty(d.IncidentKey, d.Service.ID),
		Labels:      labels,
		Links:       links(incidentURL, d.Service.HTMLURL),
		StartsAt:    parseTime(firstNonEmpty(d.CreatedAt, e.OccurredAt)),
		Summary:     firstNonEmpty(incidentTitle, e.EventType),
	}}}, nil
}
