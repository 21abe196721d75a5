package server

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/opsagent/opsagent/store"
)

// QuotaErrorOut is the body of a quota refusal: 402, or 429 with
// Retry-After for monthly (rate-like) quotas.
type QuotaErrorOut struct {
	Detail  string  `json:"detail"`
	Code    string  `json:"code" doc:"quota_exceeded, feature_not_in_plan or billing_read_only"`
	Quota   string  `json:"quota,omitempty"`
	Plan    string  `json:"plan,omitempty"`
	Limit   float64 `json:"limit"`
	Current float64 `json:"current"`
}

// writeQuotaError answers a create the org's plan does not allow.
func writeQuotaError(w http.ResponseWriter, qe *store.QuotaError) {
	out := QuotaErrorOut{Detail: qe.Error(), Code: "quota_exceeded", Quota: string(qe.Quota), Plan: qe.Plan,
		Limit: qe.Limit, Current: qe.Current}
	if qe.ReadOnly || qe.Feature != "" {
		out.Code = "billing_read_only"
		if qe.Feature != "" {
			out.Code = "feature_not_in_plan"
		}
		writeJSON(w, http.StatusPaymentRequired, out)
		return
	}
	if qe.Quota.Monthly() {
		secs := int((qe.RetryAfter + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
		writeJSON(w, http.StatusTooManyRequests, out)
		return
	}
	writeJSON(w, http.StatusPaymentRequired, out)
}

// unavailableError is a 503 with Retry-After: a peer the request needs
// (Stripe) cannot be reached; nothing was changed.
type unavailableError struct {
	retryAfter int
	detail     string
	code       string
}

func (e *unavailableError) Error() string { return e.detail }

// writeBillingError writes the billing errors (quota refusals, Stripe
// unreachable); false when err is none of them.
func writeBillingError(w http.ResponseWriter, err error) bool {
	var qe *store.QuotaError
	if errors.As(err, &qe) {
		writeQuotaError(w, qe)
		return true
	}
	var ue *unavailableError
	if errors.As(err, &ue) {
		w.Header().Set("Retry-After", strconv.Itoa(ue.retryAfter))
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"detail": ue.detail, "code": ue.code})
		return true
	}
	return false
}
