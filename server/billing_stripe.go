package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/opsagent/opsagent/server/billing"
	"github.com/opsagent/opsagent/server/webhook"
	"github.com/opsagent/opsagent/store"
)

// billingStripeRoutes: Checkout, the Customer Portal and Stripe's webhook.
func (s *Server) billingStripeRoutes() []*Route {
	tags := []string{"billing"}
	return []*Route{
		{Method: "POST", Path: "/api/billing/checkout", Summary: "Start a Stripe Checkout Session to subscribe to (or change to) a paid plan (stripe mode)", Tags: tags, Auth: AuthAny, Perm: PermOrgAdmin, Body: PlanChange{}, Resp: CheckoutOut{}, Status: 200, MaxBody: 4 << 10, Handle: s.handleCheckout},
		{Method: "POST", Path: "/api/billing/portal", Summary: "A Stripe Customer Portal link to manage payment methods, invoices and the subscription (stripe mode)", Tags: tags, Auth: AuthAny, Perm: PermOrgAdmin, Resp: PortalOut{}, Status: 200, Handle: s.handlePortal},
		{Method: "POST", Path: "/api/billing/stripe/webhook", Summary: "Stripe webhook endpoint (Stripe-Signature checked like the receiver's stripe scheme: 401 when forged, stale or from the future); subscription and invoice events update the org's plan and status", Tags: tags, Auth: AuthNone, Resp: MessageOut{}, Status: 200, MaxBody: 512 << 10, RawBody: true, Handle: s.handleStripeWebhook},
	}
}

// CheckoutOut is where to send the customer.
type CheckoutOut struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

// PortalOut is a Customer Portal link.
type PortalOut struct {
	URL string `json:"url"`
}

func (s *Server) requireStripe() error {
	if s.billing.Stripe == nil {
		return &store.Error{Code: store.EConflict, Message: "payments are not enabled on this server (--billing stripe)", Reason: "stripe_off"}
	}
	return nil
}

// stripeDown turns an unreachable Stripe into a 503 that says the org
// keeps its current plan; other Stripe refusals are a 502.
func stripeDown(err error) error {
	var se *billing.StripeError
	if errors.Is(err, billing.ErrStripeUnreachable) {
		return &store.Error{Code: store.EInternal, Message: "Stripe is unreachable", Err: err}
	}
	if errors.As(err, &se) {
		return &store.Error{Code: store.EConflict, Message: "Stripe refused the request: " + se.Message, Reason: "stripe_error", Err: err}
	}
	return err
}

// customerOf returns the org's Stripe customer, creating it on first use.
func (s *Server) customerOf(c *Ctx) (string, error) {
	a, err := s.db.FindBillingAccount(c.Context(), c.OrgID())
	if err != nil {
		return "", err
	}
	if a.StripeCustomerID != "" {
		return a.StripeCustomerID, nil
	}
	name := c.OrgID()
	if o, _, err := s.db.FindOrgByID(c.Context(), c.ID.UserID, c.OrgID()); err == nil {
		name = o.Name
	}
	id, err := s.billing.Stripe.CreateCustomer(c.Context(), c.OrgID(), name, "")
	if err != nil {
		return "", err
	}
	_, err = s.db.UpdateBillingAccount(c.Context(), c.OrgID(), func(_ *store.Tx, a *store.BillingAccount) error {
		if a.StripeCustomerID == "" {
			a.StripeCustomerID = id
			if a.PlanID == "" {
				a.PlanID = s.billing.PlanOf(a).ID
			}
		}
		id = a.StripeCustomerID // a concurrent request may have linked one first
		return nil
	})
	if err == nil {
		c.Audit("billing.customer_created", "success", "organization", c.OrgID(), map[string]any{"customer": id})
	}
	return id, err
}

// handleCheckout is POST /api/billing/checkout.
func (s *Server) handleCheckout(c *Ctx) error {
	var req PlanChange
	if err := c.Bind(&req); err != nil {
		return err
	}
	plan, ok := s.billing.Catalog.Get(req.PlanID)
	if !ok {
		return invalid("Unknown plan "+strconv.Quote(req.PlanID), "value_error.plan", "body", "plan_id")
	}
	if err := s.requireStripe(); err != nil {
		return err
	}
	if !plan.Selectable || plan.StripePriceID == "" {
		return &store.Error{Code: store.EConflict, Message: "plan " + plan.ID + " has no Stripe price to subscribe to", Reason: "plan_not_purchasable"}
	}
	cust, err := s.customerOf(c)
	if err != nil {
		return s.stripeFailed(c, "billing.checkout_started", err)
	}
	base := s.publicBase(c.R)
	r := billing.CheckoutRequest{Customer: cust, OrgID: c.OrgID(), PlanID: plan.ID, PriceID: plan.StripePriceID,
		SuccessURL: base + "/billing?checkout=success", CancelURL: base + "/billing?checkout=cancelled"}
	for _, m := range billing.Meters() {
		if sm, ok := plan.StripeMeters[m]; ok {
			r.MeteredPriceIDs = append(r.MeteredPriceIDs, sm.PriceID)
		}
	}
	id, url, err := s.billing.Stripe.CreateCheckoutSession(c.Context(), r)
	if err != nil {
		return s.stripeFailed(c, "billing.checkout_started", err)
	}
	c.Audit("billing.checkout_started", "success", "organization", c.OrgID(), map[string]any{"plan": plan.ID, "session": id})
	return c.JSON(200, CheckoutOut{ID: id, URL: url})
}

// stripeFailed audits a failed Stripe call and answers with its error;
// nothing local changed, so the org keeps working on its plan.
func (s *Server) stripeFailed(c *Ctx, action string, err error) error {
	c.Audit(action, "failure", "organization", c.OrgID(), map[string]any{"error": err.Error()})
	if errors.Is(err, billing.ErrStripeUnreachable) {
		s.log.Warn("billing: stripe unreachable", "org_id", c.OrgID(), "err", err)
		return &unavailableError{retryAfter: 30, detail: "Stripe cannot be reached right now (retried with back-off); the organization keeps its current plan; try again in a minute",
			code: "stripe_unreachable"}
	}
	return stripeDown(err)
}

// handlePortal is POST /api/billing/portal.
func (s *Server) handlePortal(c *Ctx) error {
	if err := s.requireStripe(); err != nil {
		return err
	}
	cust, err := s.customerOf(c)
	if err != nil {
		return s.stripeFailed(c, "billing.portal_opened", err)
	}
	url, err := s.billing.Stripe.CreatePortalSession(c.Context(), cust, s.publicBase(c.R)+"/billing")
	if err != nil {
		return s.stripeFailed(c, "billing.portal_opened", err)
	}
	c.Audit("billing.portal_opened", "success", "organization", c.OrgID(), nil)
	return c.JSON(200, PortalOut{URL: url})
}

// stripeEvent is the part of a Stripe Event object billing reads.
type stripeEvent struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Data struct {
		Object stripeObject `json:"object"`
	} `json:"data"`
}

type stripeObject struct {
	ID                string            `json:"id"`
	Customer          string            `json:"customer"`
	Subscription      string            `json:"subscription"`
	Status            string            `json:"status"`
	ClientReferenceID string            `json:"client_reference_id"`
	Metadata          map[string]string `json:"metadata"`
	Items             struct {
		Data []struct {
			Price struct {
				ID string `json:"id"`
			} `json:"price"`
		} `json:"data"`
	} `json:"items"`
}

// handleStripeWebhook is POST /api/billing/stripe/webhook.
func (s *Server) handleStripeWebhook(c *Ctx) error {
	if err := s.requireStripe(); err != nil {
		return store.NotFound("webhook")
	}
	body, err := io.ReadAll(c.R.Body)
	if err != nil {
		return err
	}
	if err := webhook.Verify(webhook.SchemeStripe, [][]byte{[]byte(s.cfg.StripeWebhookSecret)}, c.R.Header, body, s.Now()); err != nil {
		s.log.Warn("billing: stripe webhook refused", "err", err)
		return unauthorized("invalid Stripe signature")
	}
	var ev stripeEvent
	if err := json.Unmarshal(body, &ev); err != nil || ev.ID == "" || ev.Type == "" {
		return invalid("Body is not a Stripe event", "value_error.json", "body")
	}
	orgID, change, err := s.applyStripeEvent(c.Context(), &ev)
	if err != nil {
		return err
	}
	if err := s.billing.RefreshPastDue(c.Context()); err != nil {
		return err
	}
	if change != nil {
		s.audit(c.Context(), AuditEvent{Action: "billing.stripe_event", Outcome: "success", OrgID: orgID, TargetType: "organization",
			TargetID: orgID, IP: c.ClientIP(), Detail: change})
	}
	return c.JSON(200, MessageOut{Detail: "ok"})
}

// applyStripeEvent updates the org an event is about, once per event id.
// Events about customers this server does not know are acknowledged and
// ignored (Stripe would retry a failure for days).
func (s *Server) applyStripeEvent(ctx context.Context, ev *stripeEvent) (string, map[string]any, error) {
	o := ev.Data.Object
	orgID := ""
	if ev.Type == "checkout.session.completed" {
		orgID = o.ClientReferenceID
	} else if o.Customer != "" {
		if a, err := s.db.FindBillingAccountByCustomer(ctx, o.Customer); err == nil {
			orgID = a.OrgID
		}
	}
	if orgID == "" || !store.ValidID(orgID) {
		s.log.Info("billing: stripe event for no known org ignored", "event", ev.ID, "type", ev.Type)
		return "", nil, nil
	}
	var change map[string]any
	_, err := s.db.UpdateBillingAccount(ctx, orgID, func(tx *store.Tx, a *store.BillingAccount) error {
		if seen, err := store.MarkStripeEvent(ctx, tx, ev.ID, ev.Type, orgID); err != nil || seen {
			if err == nil {
				err = errNoChange
			}
			return err
		}
		if ev.Type == "checkout.session.completed" && a.StripeCustomerID != "" && a.StripeCustomerID != o.Customer {
			return errNoChange // a session of another customer claiming this org
		}
		before := *a
		now := tx.Now
		switch ev.Type {
		case "checkout.session.completed":
			a.StripeCustomerID, a.StripeSubscriptionID = o.Customer, o.Subscription
			s.switchPlan(ctx, tx, a, o.Metadata["plan_id"])
		case "customer.subscription.created", "customer.subscription.updated":
			a.StripeSubscriptionID = o.ID
			planID := o.Metadata["plan_id"]
			for _, it := range o.Items.Data {
				if p, ok := s.billing.Catalog.ByStripePrice(it.Price.ID); ok {
					planID, a.StripePriceID = p.ID, it.Price.ID
				}
			}
			switch o.Status {
			case "active", "trialing":
				a.Status, a.PastDueSince = o.Status, nil
				s.switchPlan(ctx, tx, a, planID)
			case "past_due", "unpaid":
				markPastDue(a, now)
			case "canceled", "incomplete_expired":
				a.Status = store.BillingCanceled
				s.switchPlan(ctx, tx, a, s.billing.DefaultPlan)
			}
		case "customer.subscription.deleted":
			a.Status, a.PastDueSince, a.StripeSubscriptionID = store.BillingCanceled, nil, ""
			s.switchPlan(ctx, tx, a, s.billing.DefaultPlan)
		case "invoice.paid", "invoice.payment_succeeded":
			a.Status, a.PastDueSince = store.BillingActive, nil
		case "invoice.payment_failed":
			markPastDue(a, now)
		default:
			return nil // recorded as seen, nothing to change
		}
		change = map[string]any{"event": ev.ID, "type": ev.Type, "plan": a.PlanID, "status": a.Status,
			"pending_plan": a.PendingPlanID, "previous_plan": before.PlanID, "previous_status": before.Status}
		return nil
	})
	if errors.Is(err, errNoChange) {
		return orgID, nil, nil
	}
	return orgID, change, err
}

func markPastDue(a *store.BillingAccount, now time.Time) {
	a.Status = store.BillingPastDue
	if a.PastDueSince == nil {
		a.PastDueSince = &now
	}
}

// switchPlan moves a to planID, or records it as pending when the current
// use does not fit it (a downgrade is explained, not applied, until then).
func (s *Server) switchPlan(ctx context.Context, tx *store.Tx, a *store.BillingAccount, planID string) {
	plan, ok := s.billing.Catalog.Get(planID)
	if !ok || plan.ID == a.PlanID {
		if ok {
			a.PendingPlanID, a.PendingReason = "", ""
		}
		return
	}
	if v := s.violations(ctx, tx, a.OrgID, plan); len(v) > 0 {
		if a.PlanID == "" {
			a.PlanID = s.billing.PlanOf(a).ID
		}
		a.PendingPlanID, a.PendingReason = plan.ID, downgradeBlocked(plan, v).out.Detail
		return
	}
	a.PlanID, a.PendingPlanID, a.PendingReason = plan.ID, "", ""
}

// stripeMeterScale is what one Stripe meter unit is in a meter's raw
// quantity: meter event values are whole numbers, so cost goes in cents
// and storage in MiB.
var stripeMeterScale = map[string]float64{billing.MeterLLMCost: 0.01, billing.MeterKnowledgeBytes: 1 << 20}

// reportStripeUsage is the billing-stripe-usage job: for each subscribed
// org, the increase of each metered quantity since the last report is sent
// as a meter event. A failure (Stripe unreachable after the client's own
// back-off) leaves the reported mark unchanged, so the next run sends it.
func (s *Server) reportStripeUsage(ctx context.Context) error {
	if s.billing.Stripe == nil {
		return nil
	}
	accts, err := s.db.FindBillingAccounts(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, a := range accts {
		plan := s.billing.PlanOf(a)
		if a.StripeCustomerID == "" || a.StripeSubscriptionID == "" || len(plan.StripeMeters) == 0 {
			continue
		}
		period := store.Period(s.Now())
		_, rows, err := s.billing.Meter(ctx, a.OrgID, period, false)
		if err != nil {
			return err
		}
		totals := billing.Totals(rows)
		for _, m := range billing.Meters() {
			sm, ok := plan.StripeMeters[m]
			if !ok {
				continue
			}
			scale := stripeMeterScale[m]
			if scale == 0 {
				scale = 1
			}
			done, err := s.db.StripeReported(ctx, a.OrgID, period, m)
			if err != nil {
				return err
			}
			units := int64(math.Floor(totals[m]/scale)) - int64(math.Floor(done/scale+1e-9))
			if units <= 0 {
				continue
			}
			mark := float64(int64(math.Floor(done/scale+1e-9))+units) * scale
			ident := a.OrgID + ":" + period + ":" + m + ":" + strconv.FormatFloat(mark, 'f', -1, 64)
			if err := s.billing.Stripe.CreateMeterEvent(ctx, sm.EventName, a.StripeCustomerID, units, ident, s.Now()); err != nil {
				s.log.Warn("billing: usage not reported to Stripe; next run retries", "org_id", a.OrgID, "meter", m, "err", err)
				errs = append(errs, err)
				continue
			}
			if err := s.db.SetStripeReported(ctx, a.OrgID, period, m, mark); err != nil {
				return err
			}
		}
	}
	return errors.Join(errs...)
}

// RunStripeUsageReport runs the usage report job once (tests).
func (s *Server) RunStripeUsageReport(ctx context.Context) error { return s.reportStripeUsage(ctx) }
