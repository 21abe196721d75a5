package server

import (
	"context"
	"time"

	"github.com/opsagent/opsagent/server/billing"
	"github.com/opsagent/opsagent/store"
)

// Billing (issue 16): plans with quotas enforced in the transactions that
// create things, metering, statements and optional Stripe payments. With
// --billing off (the default) every org is on the unlimited plan and no
// quota check runs at all.

// PlanOut is a plan as clients see it.
type PlanOut struct {
	ID              string             `json:"id"`
	Name            string             `json:"name"`
	Description     string             `json:"description"`
	Limits          map[string]float64 `json:"limits" doc:"quota -> limit; a quota absent here is unlimited"`
	Features        []string           `json:"features"`
	MonthlyPriceUSD float64            `json:"monthly_price_usd"`
	UnitPricesUSD   map[string]float64 `json:"unit_prices_usd"`
	Selectable      bool               `json:"selectable"`
	Checkout        bool               `json:"checkout" doc:"subscribing goes through Stripe Checkout"`
	Builtin         bool               `json:"builtin"`
}

// PlanListOut lists the plans in force.
type PlanListOut struct {
	Items []PlanOut `json:"items"`
	Mode  string    `json:"mode"`
}

// QuotaOut is one quota of the org's plan against its current use.
type QuotaOut struct {
	Quota   string   `json:"quota"`
	Limit   *float64 `json:"limit" doc:"null: unlimited"`
	Current float64  `json:"current"`
	Monthly bool     `json:"monthly" doc:"resets at the start of each UTC month; over it answers 429"`
}

// BillingOut is the org's billing state.
type BillingOut struct {
	Mode          string     `json:"mode" doc:"off, showback or stripe"`
	Plan          PlanOut    `json:"plan"`
	Status        string     `json:"status" doc:"active, trialing, past_due, canceled"`
	ReadOnly      bool       `json:"read_only" doc:"past due beyond the grace period: nothing new can be created"`
	GraceEndsAt   *string    `json:"grace_ends_at"`
	PendingPlanID string     `json:"pending_plan_id" doc:"a downgrade waiting until current use fits it"`
	PendingReason string     `json:"pending_reason"`
	Period        string     `json:"period" doc:"current UTC month, YYYY-MM"`
	Quotas        []QuotaOut `json:"quotas"`
	Stripe        bool       `json:"stripe" doc:"Checkout and the customer portal are available"`
	HasCustomer   bool       `json:"has_customer"`
}

// PlanChange is the body of PUT /api/billing/plan.
type PlanChange struct {
	PlanID string `json:"plan_id" validate:"required,min=1,max=63"`
}

// installBilling builds the billing service and, unless billing is off,
// installs its quota gate on the store.
func (s *Server) installBilling() error {
	mode, err := billing.ParseMode(s.cfg.Billing)
	if err != nil {
		return err
	}
	cat, err := s.cfg.billingCatalog()
	if err != nil {
		return err
	}
	grace := s.cfg.BillingGrace
	if grace == 0 {
		grace = DefaultBillingGrace // a config built without flags (tests, tools)
	}
	s.billing = &billing.Service{Mode: mode, Catalog: cat, DefaultPlan: s.cfg.billingDefaultPlan(), Grace: grace,
		DB: s.db, Now: func() time.Time { return s.Now() }, KnowledgeUse: s.rag.OrgBytes}
	if mode == billing.ModeStripe {
		s.billing.Stripe = billing.NewStripe(s.cfg.StripeAPIKey, s.cfg.StripeAPIBase)
	}
	if !s.billing.On() {
		return nil
	}
	if err := s.billing.RefreshPastDue(context.Background()); err != nil {
		return err
	}
	return s.db.SetQuotaGate(s.billing.Gate)
}

func (s *Server) planOut(p *billing.Plan) PlanOut {
	out := PlanOut{ID: p.ID, Name: p.Name, Description: p.Description, Limits: map[string]float64{}, Features: p.Features,
		MonthlyPriceUSD: p.MonthlyPriceUSD, UnitPricesUSD: p.UnitPricesUSD, Selectable: p.Selectable, Builtin: p.Builtin,
		Checkout: s.billing.Mode == billing.ModeStripe && p.StripePriceID != ""}
	for k, v := range p.Limits {
		out.Limits[string(k)] = v
	}
	if out.UnitPricesUSD == nil {
		out.UnitPricesUSD = map[string]float64{}
	}
	return out
}

// quotaUse reads the current use of every quota of an org.
func (s *Server) quotaUse(ctx context.Context, orgID string) (map[store.QuotaKind]float64, error) {
	use := map[store.QuotaKind]float64{}
	for _, k := range []store.QuotaKind{store.QuotaMembers, store.QuotaProjects, store.QuotaEnabledTasks, store.QuotaConnectors, store.QuotaChannels} {
		n, _, err := store.QuotaUse(ctx, s.db.Reader(), k, orgID, s.Now())
		if err != nil {
			return nil, err
		}
		use[k] = float64(n)
	}
	kb, _ := s.rag.OrgBytes(orgID)
	use[store.QuotaKnowledgeBytes] = float64(kb)
	month := billing.MonthStart(s.Now())
	ev, err := store.CountWebhookEventsSince(ctx, s.db.Reader(), orgID, month)
	if err != nil {
		return nil, err
	}
	use[store.QuotaWebhookEvents] = float64(ev)
	au, err := s.db.FindAgentUse(ctx, orgID, month)
	if err != nil {
		return nil, err
	}
	use[store.QuotaAgentRuns], use[store.QuotaAgentTokens], use[store.QuotaLLMCost] = float64(au.Runs), float64(au.Tokens), au.Cost
	return use, nil
}

func (s *Server) billingOut(ctx context.Context, orgID string) (*BillingOut, error) {
	a, err := s.db.FindBillingAccount(ctx, orgID)
	if err != nil {
		return nil, err
	}
	plan := s.billing.PlanOf(a)
	use, err := s.quotaUse(ctx, orgID)
	if err != nil {
		return nil, err
	}
	out := &BillingOut{Mode: string(s.billing.Mode), Plan: s.planOut(plan), Status: a.Status, ReadOnly: s.billing.ReadOnly(a, s.Now()),
		PendingPlanID: a.PendingPlanID, PendingReason: a.PendingReason, Period: store.Period(s.Now()),
		Stripe: s.billing.Stripe != nil, HasCustomer: a.StripeCustomerID != "", Quotas: []QuotaOut{}}
	if g := s.billing.GraceEnds(a); g != nil {
		v := g.UTC().Format(time.RFC3339)
		out.GraceEndsAt = &v
	}
	for _, k := range store.QuotaKinds() {
		q := QuotaOut{Quota: string(k), Current: use[k], Monthly: k.Monthly()}
		if v, ok := plan.Limit(k); ok {
			q.Limit = &v
		}
		out.Quotas = append(out.Quotas, q)
	}
	return out, nil
}
