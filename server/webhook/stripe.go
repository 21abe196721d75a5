package webhook

import (
	"strings"
)

// stripeEvent is a Stripe Event object (https://docs.stripe.com/api/events/object).
type stripeEvent struct {
	ID       string `json:"id"`
	Object   string `json:"object"`
	Type     string `json:"type"`
	Created  text   `json:"created"`
	Livemode bool   `json:"livemode"`
	Data     struct {
		Object struct {
			ID          string `json:"id"`
			Object      string `json:"object"`
			Customer    text   `json:"customer"`
			Status      string `json:"status"`
			Amount      text   `json:"amount"`
			AmountDue   text   `json:"amount_due"`
			Currency    string `json:"currency"`
			Reason      string `json:"reason"`
			Description string `json:"description"`
			HostedURL   string `json:"hosted_invoice_url"`
			LastError   *struct {
				Message string `json:"message"`
			} `json:"last_payment_error"`
			FailureMessage string `json:"failure_message"`
		} `json:"object"`
	} `json:"data"`
}

func parseStripe(body []byte) (Event, error) {
	var e stripeEvent
	if err := decode("stripe", body, &e); err != nil {
		return Event{}, err
	}
	if e.Type == "" || (e.Object != "" && e.Object != "event") {
		return Event{}, newError(CodeInvalidPayload, "stripe payload is not an event object with a type")
	}
	o := e.Data.Object
	delivery := e.ID // evt_...: the same event re-sent keeps it
	labels := map[string]string{}
	putLabel(labels, "object", o.Object)
	putLabel(labels, "customer", string(o.Customer))
	putLabel(labels, "status", o.Status)
	putLabel(labels, "currency", o.Currency)
	putLabel(labels, "amount", firstNonEmpty(string(o.Amount), string(o.AmountDue)))
	putLabel(labels, "reason", o.Reason)
	labels["livemode"] = "false"
	dash := "https://dashboard.stripe.com/test/events/"
	if e.Livemode {
		labels["livemode"] = "true"
		dash = "https://dashboard.stripe.com/events/"
	}
	summary := o.FailureMessage
	if o.LastError != nil {
		summary = firstNonEmpty(o.LastError.Message, summary)
	}
	title := e.Type
	if o.ID != "" {
		title += " " + o.ID
	}
	return Event{Type: e.Type, Delivery: delivery, Alerts: []Alert{{
		Title:       title,
		Severity:    stripeSeverity(e.Type),
		Status:      stripeStatus(e.Type),
		Fingerprint: "stripe-" + firstNonEmpty(o.ID, e.ID),
		GroupKey:    firstNonEmpty(string(o.Customer), o.Object),
		Labels:      labels,
		Links:       links(dash+e.ID, o.HostedURL),
		StartsAt:    parseTime(string(e.Created)),
		Summary:     firstNonEmpty(summary, o.Description),
	}}}, nil
}

// stripeSeverity ranks event types by how much an operator should care:
// fraud and disputes cost money now, failures may, the rest is news.
func stripeSeverity(typ string) string {
	switch {
	case strings.Contains(typ, "fraud") || strings.HasPrefix(typ, "charge.dispute.created") ||
		strings.HasPrefix(typ, "radar."):
		return SeverityCritical
	case strings.Contains(typ, "failed") || strings.Contains(typ, "dispute"):
		return SeverityError
	case strings.Contains(typ, "action_required") || strings.Contains(typ, "past_due") ||
		strings.HasSuffix(typ, ".canceled") || strings.HasSuffix(typ, ".expired") ||
		strings.Contains(typ, "will_end") || strings.Contains(typ, "upcoming"):
		return SeverityWarning
	}
	return SeverityInfo
}

// stripeStatus: events that report something going right close the alert
// an earlier failure opened for the same object.
func stripeStatus(typ string) string {
	last := typ[strings.LastIndexByte(typ, '.')+1:]
	switch last {
	case "succeeded", "paid", "closed", "resolved", "funds_reinstated":
		return StatusResolved
	}
	return StatusFiring
}
