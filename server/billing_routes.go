package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/opsagent/opsagent/server/billing"
	"github.com/opsagent/opsagent/store"
)

// billingRoutes: plan, quotas, metering, statements and Stripe. Owners and
// admins manage (org:admin); every member reads the org's usage (usage:read).
func (s *Server) billingRoutes() []*Route {
	tags := []string{"billing"}
	return []*Route{
		{Method: "GET", Path: "/api/billing", Summary: "The org's plan, payment status and quotas against current use", Tags: tags, Auth: AuthAny, Perm: PermUsageRead, Resp: BillingOut{}, Status: 200, MCP: true, Handle: s.handleGetBilling},
		{Method: "GET", Path: "/api/billing/plans", Summary: "The plans in force (built-in and the operator's)", Tags: tags, Auth: AuthAny, Perm: PermUsageRead, Resp: PlanListOut{}, Status: 200, Handle: s.handleListPlans},
		{Method: "PUT", Path: "/api/billing/plan", Summary: "Switch the org to a selectable plan (showback; paid plans go through checkout in stripe mode). A downgrade below current use is refused with an explanation", Tags: tags, Auth: AuthAny, Perm: PermOrgAdmin, Body: PlanChange{}, Resp: BillingOut{}, Status: 200, MaxBody: 4 << 10,
			ErrorResp: map[int]any{http.StatusConflict: DowngradeBlockedOut{}}, Handle: s.handlePutPlan},
	}
}

// DowngradeBlockedOut explains a plan change the current use does not fit.
type DowngradeBlockedOut struct {
	Detail     string     `json:"detail"`
	Code       string     `json:"code" doc:"downgrade_blocked"`
	Violations []QuotaOut `json:"violations" doc:"each quota whose current use is above the new plan's limit"`
}

type downgradeError struct{ out DowngradeBlockedOut }

func (e *downgradeError) Error() string { return e.out.Detail }

// handleGetBilling is GET /api/billing.
func (s *Server) handleGetBilling(c *Ctx) error {
	s.applyPendingPlan(c.Context(), c.OrgID())
	out, err := s.billingOut(c.Context(), c.OrgID())
	if err != nil {
		return err
	}
	return c.JSON(200, out)
}

// handleListPlans is GET /api/billing/plans.
func (s *Server) handleListPlans(c *Ctx) error {
	out := PlanListOut{Mode: string(s.billing.Mode), Items: []PlanOut{}}
	for _, p := range s.billing.Catalog.All() {
		out.Items = append(out.Items, s.planOut(p))
	}
	return c.JSON(200, out)
}

// handlePutPlan is PUT /api/billing/plan.
func (s *Server) handlePutPlan(c *Ctx) error {
	var req PlanChange
	if err := c.Bind(&req); err != nil {
		return err
	}
	plan, ok := s.billing.Catalog.Get(req.PlanID)
	if !ok {
		return invalid(fmt.Sprintf("Unknown plan %q", req.PlanID), "value_error.plan", "body", "plan_id")
	}
	if !s.billing.On() {
		return &store.Error{Code: store.EConflict, Message: "billing is off on this server (--billing off): every org is on the unlimited plan", Reason: "billing_off"}
	}
	if !plan.Selectable {
		return &store.Error{Code: store.EForbidden, Message: "plan " + plan.ID + " is assigned by the operator only", Reason: "plan_not_selectable"}
	}
	if s.billing.Stripe != nil && plan.StripePriceID != "" {
		return &store.Error{Code: store.EConflict, Message: "plan " + plan.ID + " is paid: subscribe through POST /api/billing/checkout", Reason: "checkout_required"}
	}
	var from string
	_, err := s.db.UpdateBillingAccount(c.Context(), c.OrgID(), func(tx *store.Tx, a *store.BillingAccount) error {
		from = s.billing.PlanOf(a).ID
		if s.billing.Stripe != nil && a.StripeSubscriptionID != "" {
			// Switching here would leave the Stripe subscription charging.
			return &store.Error{Code: store.EConflict, Reason: "subscription_active",
				Message: "the organization has a Stripe subscription: change or cancel it in the customer portal (POST /api/billing/portal)"}
		}
		if v := s.violations(c.Context(), tx, c.OrgID(), plan); len(v) > 0 {
			return downgradeBlocked(plan, v)
		}
		a.PlanID, a.PendingPlanID, a.PendingReason = plan.ID, "", ""
		return nil
	})
	var de *downgradeError
	if errors.As(err, &de) {
		c.Audit("billing.plan_change_refused", "failure", "organization", c.OrgID(), map[string]any{"from": from, "to": plan.ID, "reason": de.out.Detail})
		return c.JSON(http.StatusConflict, de.out)
	}
	if err != nil {
		return err
	}
	c.Audit("billing.plan_changed", "success", "organization", c.OrgID(), map[string]any{"from": from, "to": plan.ID})
	return s.handleGetBilling(c)
}

func downgradeBlocked(plan *billing.Plan, v []QuotaOut) *downgradeError {
	parts := make([]string, 0, len(v))
	for _, q := range v {
		parts = append(parts, fmt.Sprintf("%s: %g in use, plan %s allows %g", q.Quota, q.Current, plan.ID, *q.Limit))
	}
	return &downgradeError{DowngradeBlockedOut{Code: "downgrade_blocked", Violations: v,
		Detail: "the current use does not fit plan " + plan.ID + " (" + strings.Join(parts, "; ") + "); reduce it first, the plan is not changed"}}
}

// violations lists the counted quotas whose current use is above plan's
// limits (monthly quotas only stop runs and events until the month ends,
// so they never block a change).
func (s *Server) violations(ctx context.Context, q store.Querier, orgID string, plan *billing.Plan) []QuotaOut {
	var out []QuotaOut
	for _, k := range []store.QuotaKind{store.QuotaMembers, store.QuotaProjects, store.QuotaEnabledTasks, store.QuotaConnectors, store.QuotaChannels, store.QuotaKnowledgeBytes} {
		limit, ok := plan.Limit(k)
		if !ok {
			continue
		}
		var cur float64
		if k == store.QuotaKnowledgeBytes {
			n, _ := s.rag.OrgBytes(orgID)
			cur = float64(n)
		} else {
			n, counted, err := store.QuotaUse(ctx, q, k, orgID, s.Now())
			if err != nil || !counted {
				continue
			}
			cur = float64(n)
		}
		if cur > limit {
			l := limit
			out = append(out, QuotaOut{Quota: string(k), Limit: &l, Current: cur})
		}
	}
	return out
}

// applyPendingPlan switches an org to the downgrade it asked for (through
// Stripe) once its use fits; until then the old plan stays in force.
func (s *Server) applyPendingPlan(ctx context.Context, orgID string) {
	if !s.billing.On() {
		return
	}
	a, err := s.db.FindBillingAccount(ctx, orgID)
	if err != nil || a.PendingPlanID == "" {
		return
	}
	plan, ok := s.billing.Catalog.Get(a.PendingPlanID)
	if !ok {
		return
	}
	_, err = s.db.UpdateBillingAccount(ctx, orgID, func(tx *store.Tx, a *store.BillingAccount) error {
		if a.PendingPlanID != plan.ID {
			return errNoChange
		}
		if v := s.violations(ctx, tx, orgID, plan); len(v) > 0 {
			a.PendingReason = downgradeBlocked(plan, v).out.Detail
			return nil
		}
		a.PlanID, a.PendingPlanID, a.PendingReason = plan.ID, "", ""
		return nil
	})
	if err != nil && !errors.Is(err, errNoChange) {
		s.log.Warn("billing: pending plan not applied", "org_id", orgID, "err", err)
	}
}

var errNoChange = store.Errorf(store.EConflict, "no change")
