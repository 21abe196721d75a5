package server

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
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

// quotaGuarded names the routes whose create a plan's quota can refuse.
var quotaGuarded = map[string]string{
	"POST /api/projects":                           string(store.QuotaProjects),
	"POST /api/tasks":                              string(store.QuotaEnabledTasks),
	"PATCH /api/tasks/{task_id}":                   string(store.QuotaEnabledTasks),
	"POST /api/connectors":                         string(store.QuotaConnectors),
	"POST /api/channels":                           string(store.QuotaChannels),
	"POST /api/organizations/{org_id}/invitations": string(store.QuotaMembers),
	"POST /api/knowledge/documents":                string(store.QuotaKnowledgeBytes),
	"PUT /api/knowledge/documents/by-name":         string(store.QuotaKnowledgeBytes),
	"POST /api/webhooks/{task_id}":                 string(store.QuotaWebhookEvents),
}

// billingResponses documents the billing refusals of a route in OpenAPI:
// the quota a create may hit, and the read-only state every change of a
// past-due org meets once its grace period is over (billing routes and
// sign-in excepted).
func billingResponses(rt *Route, responses map[string]any, schema func(any) any) {
	if rt.Method == http.MethodGet || rt.Method == http.MethodHead {
		return
	}
	quota, guarded := quotaGuarded[rt.Method+" "+rt.Path]
	exempt := rt.Auth == AuthNone || strings.HasPrefix(rt.Path, "/api/billing") || strings.HasPrefix(rt.Path, "/api/auth/")
	if !guarded && exempt {
		return
	}
	desc := "Payment required (billing): code billing_read_only, the organization's payment is past due beyond the grace period"
	if guarded {
		desc = "Payment required (billing): code quota_exceeded (quota " + quota + " of the org's plan, with limit and current use), feature_not_in_plan, or billing_read_only"
		if store.QuotaKind(quota).Monthly() {
			desc += "; over the monthly quota the answer is 429 with Retry-After (the start of the next UTC month) and code quota_exceeded"
		}
	}
	responses["402"] = map[string]any{"description": desc, "content": map[string]any{"application/json": map[string]any{"schema": schema(QuotaErrorOut{})}}}
}
