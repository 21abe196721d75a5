package webhook

import "strings"

// grafanaLegacy is the pre-8 ("legacy alerting") Grafana webhook body,
// still sent by old installs; unified alerting sends amPayload.
type grafanaLegacy struct {
	Title    string            `json:"title"`
	RuleID   text              `json:"ruleId"`
	RuleName string            `json:"ruleName"`
	RuleURL  string            `json:"ruleUrl"`
	State    string            `json:"state"`
	Message  string            `json:"message"`
	ImageURL string            `json:"imageUrl"`
	Tags     map[string]string `json:"tags"`
}

func parseGrafana(body []byte) (Event, error) {
	var p amPayload
	if err := decodeAM("grafana", body, &p); err != nil {
		return Event{}, err
	}
	if p.Alerts != nil {
		status := p.Status
		if status == "" {
			status = p.State
		}
		return Event{Type: "grafana." + groupStatus(status), Alerts: amAlerts(p, "grafana")}, nil
	}
	var l grafanaLegacy
	if err := decode("grafana", body, &l); err != nil {
		return Event{}, err
	}
	if l.State == "" && l.RuleName == "" && l.Title == "" {
		return Event{}, newError(CodeInvalidPayload, "grafana payload has neither alerts nor a rule state")
	}
	status := StatusFiring
	if resolvedWord(l.State) {
		status = StatusResolved
	}
	labels := map[string]string{}
	for k, v := range l.Tags {
		labels[k] = v
	}
	putLabel(labels, "rule_id", string(l.RuleID))
	putLabel(labels, "rule_name", l.RuleName)
	// Identity without the state, so firing and ok deliveries correlate.
	fp := labelFingerprint(labels)
	putLabel(labels, "state", l.State)
	sev := SeverityWarning
	if strings.EqualFold(l.State, "no_data") {
		sev = SeverityInfo
	}
	return Event{Type: "grafana." + status, Alerts: []Alert{{
		Title:       firstNonEmpty(l.RuleName, l.Title, "grafana alert"),
		Severity:    severity(l.Tags["severity"], sev),
		Status:      status,
		Fingerprint: fp,
		GroupKey:    string(l.RuleID),
		Labels:      labels,
		Links:       links(l.RuleURL, l.ImageURL),
		Summary:     firstNonEmpty(l.Message, l.Title),
	}}}, nil
}
