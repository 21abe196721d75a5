// Package billing holds plans, quota checks, metering, statements and the
// Stripe client of opsagent's billing (issue 16). It knows nothing of HTTP:
// the server's billing_*.go files expose it as routes.
package billing

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"

	"github.com/opsagent/opsagent/store"
)

// Mode is the --billing setting.
type Mode string

const (
	// ModeOff: one unlimited plan, no quotas; nothing changes for a single team.
	ModeOff Mode = "off"
	// ModeShowback: plans, quotas, metering and statements, no payments.
	ModeShowback Mode = "showback"
	// ModeStripe: showback plus Stripe subscriptions, checkout and portal.
	ModeStripe Mode = "stripe"
)

// ParseMode validates a --billing value ("" is off).
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", ModeOff:
		return ModeOff, nil
	case ModeShowback, ModeStripe:
		return Mode(s), nil
	}
	return "", fmt.Errorf("billing must be off, showback or stripe, not %q", s)
}

// Features a plan can grant. connectors, channels and knowledge are
// enforced (a plan without one refuses those creates with 402
// feature_not_in_plan); the others are shown to the org and left to the
// operator's own use.
var Features = []string{"webhooks", "connectors", "channels", "knowledge", "mcp", "audit_export", "priority_support"}

// Plan is one offer: limits (absent: unlimited), features, and what the
// statements and Stripe charge for it.
type Plan struct {
	ID          string                      `json:"id"`
	Name        string                      `json:"name"`
	Description string                      `json:"description,omitempty"`
	Limits      map[store.QuotaKind]float64 `json:"limits"`
	Features    []string                    `json:"features"`
	// MonthlyPriceUSD is the flat fee a statement shows for the plan.
	MonthlyPriceUSD float64 `json:"monthly_price_usd"`
	// UnitPricesUSD prices metered use on statements (meter -> USD per unit);
	// llm_cost_usd passes the model cost through at its own price when unset.
	UnitPricesUSD map[string]float64 `json:"unit_prices_usd,omitempty"`
	// Selectable: org owners and admins may switch to it themselves
	// (showback) or subscribe to it through Checkout (stripe).
	Selectable bool `json:"selectable"`
	// StripePriceID is the recurring price of the subscription (stripe mode).
	StripePriceID string `json:"stripe_price_id,omitempty"`
	// StripeMeters maps a meter to a Stripe billing meter (event_name) and
	// the usage-based price behind it; usage is reported as meter events.
	StripeMeters map[string]StripeMeter `json:"stripe_meters,omitempty"`
	Builtin      bool                   `json:"builtin"`
}

// StripeMeter is a usage-based price of a plan.
type StripeMeter struct {
	EventName string `json:"event_name"`
	PriceID   string `json:"price_id"`
}

// Limit returns the plan's limit of kind; ok is false when unlimited.
func (p *Plan) Limit(kind store.QuotaKind) (float64, bool) {
	v, ok := p.Limits[kind]
	return v, ok
}

// HasFeature reports whether the plan grants f.
func (p *Plan) HasFeature(f string) bool { return slices.Contains(p.Features, f) }

func lim(kv ...any) map[store.QuotaKind]float64 {
	m := map[store.QuotaKind]float64{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(store.QuotaKind)] = float64(kv[i+1].(int))
	}
	return m
}

const mib = 1 << 20

// Builtin returns the default plan set. "unlimited" is the plan of every org
// while billing is off, and the default in showback mode.
func Builtin() []*Plan {
	all := append([]string(nil), Features...)
	return []*Plan{
		{ID: "unlimited", Name: "Unlimited", Description: "No limits (self-hosted default)", Limits: lim(), Features: all, Builtin: true},
		{ID: "free", Name: "Free", Description: "For trying opsagent with a small team", Selectable: true, Builtin: true,
			Features: []string{"webhooks", "knowledge", "connectors", "channels"},
			Limits: lim(store.QuotaMembers, 3, store.QuotaProjects, 2, store.QuotaEnabledTasks, 5, store.QuotaConnectors, 1,
				store.QuotaChannels, 1, store.QuotaKnowledgeBytes, 50*mib, store.QuotaWebhookEvents, 1000,
				store.QuotaAgentRuns, 200, store.QuotaAgentTokens, 2_000_000, store.QuotaLLMCost, 10)},
		{ID: "team", Name: "Team", Description: "For one operations team", Selectable: true, Builtin: true, MonthlyPriceUSD: 49,
			Features: []string{"webhooks", "connectors", "channels", "knowledge", "mcp"},
			Limits: lim(store.QuotaMembers, 15, store.QuotaProjects, 10, store.QuotaEnabledTasks, 50, store.QuotaConnectors, 10,
				store.QuotaChannels, 10, store.QuotaKnowledgeBytes, 1024*mib, store.QuotaWebhookEvents, 50_000,
				store.QuotaAgentRuns, 5000, store.QuotaAgentTokens, 50_000_000, store.QuotaLLMCost, 250)},
		{ID: "business", Name: "Business", Description: "For many teams", Selectable: true, Builtin: true, MonthlyPriceUSD: 299,
			Features: all,
			Limits: lim(store.QuotaMembers, 100, store.QuotaProjects, 100, store.QuotaEnabledTasks, 500, store.QuotaConnectors, 100,
				store.QuotaChannels, 100, store.QuotaKnowledgeBytes, 20*1024*mib, store.QuotaWebhookEvents, 1_000_000,
				store.QuotaAgentRuns, 100_000, store.QuotaAgentTokens, 1_000_000_000, store.QuotaLLMCost, 5000)},
	}
}

// Catalog is the plans in force: the built-in set overlaid by the
// operator's file (a plan with a built-in id replaces it).
type Catalog struct {
	plans []*Plan
	byID  map[string]*Plan
}

var planID = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// NewCatalog validates plans over the built-in set.
func NewCatalog(operator []*Plan) (*Catalog, error) {
	c := &Catalog{byID: map[string]*Plan{}}
	for _, p := range append(Builtin(), operator...) {
		if err := validatePlan(p); err != nil {
			return nil, err
		}
		if _, dup := c.byID[p.ID]; dup {
			i := slices.IndexFunc(c.plans, func(q *Plan) bool { return q.ID == p.ID })
			c.plans[i] = p
		} else {
			c.plans = append(c.plans, p)
		}
		c.byID[p.ID] = p
	}
	return c, nil
}

func validatePlan(p *Plan) error {
	if !planID.MatchString(p.ID) {
		return fmt.Errorf("plan id %q: use lower-case letters, digits, - and _ (at most 63)", p.ID)
	}
	if p.Name == "" {
		p.Name = p.ID
	}
	if p.Limits == nil {
		p.Limits = map[store.QuotaKind]float64{}
	}
	for k, v := range p.Limits {
		if !slices.Contains(store.QuotaKinds(), k) {
			return fmt.Errorf("plan %s: unknown limit %q (known: %v)", p.ID, k, store.QuotaKinds())
		}
		if v < 0 {
			return fmt.Errorf("plan %s: limit %s must not be negative", p.ID, k)
		}
	}
	for _, f := range p.Features {
		if !slices.Contains(Features, f) {
			return fmt.Errorf("plan %s: unknown feature %q (known: %v)", p.ID, f, Features)
		}
	}
	if p.Features == nil {
		// A plan that says nothing of features has them all; a list restricts.
		p.Features = append([]string(nil), Features...)
	}
	sort.Strings(p.Features)
	for m, sm := range p.StripeMeters {
		if !slices.Contains(Meters(), m) || sm.EventName == "" || sm.PriceID == "" {
			return fmt.Errorf("plan %s: stripe_meters[%q] needs a meter of %v with event_name and price_id", p.ID, m, Meters())
		}
	}
	for m, v := range p.UnitPricesUSD {
		if !slices.Contains(Meters(), m) || v < 0 {
			return fmt.Errorf("plan %s: unit_prices_usd[%q] must name a meter %v with a price >= 0", p.ID, m, Meters())
		}
	}
	return nil
}

// LoadPlansFile reads an operator's plans: a JSON array of Plan objects.
func LoadPlansFile(path string) ([]*Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("billing plans: %w", err)
	}
	var plans []*Plan
	if err := json.Unmarshal(b, &plans); err != nil {
		return nil, fmt.Errorf("billing plans %s: %w", path, err)
	}
	for _, p := range plans {
		p.Builtin = false
	}
	return plans, nil
}

// Get returns a plan by id.
func (c *Catalog) Get(id string) (*Plan, bool) {
	p, ok := c.byID[id]
	return p, ok
}

// All lists the plans, built-in ones first.
func (c *Catalog) All() []*Plan { return c.plans }

// ByStripePrice finds the plan whose subscription price is priceID.
func (c *Catalog) ByStripePrice(priceID string) (*Plan, bool) {
	for _, p := range c.plans {
		if p.StripePriceID != "" && p.StripePriceID == priceID {
			return p, true
		}
	}
	return nil, false
}
