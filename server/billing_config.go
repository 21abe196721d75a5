package server

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"time"

	"github.com/opsagent/opsagent/server/billing"
)

// DefaultBillingGrace is how long a past-due org keeps working.
const DefaultBillingGrace = 7 * 24 * time.Hour

// billingFlags registers the billing settings (issue 16).
func (c *Config) billingFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Billing, "billing", "off", "billing mode: off (one unlimited plan), showback (plans, quotas, statements) or stripe (showback plus Stripe subscriptions)")
	fs.StringVar(&c.BillingPlans, "billing-plans", "", "JSON file of operator plans, merged over the built-in ones (free, team, business, unlimited)")
	fs.StringVar(&c.BillingDefaultPlan, "billing-default-plan", "", "plan of orgs that never chose one (default: unlimited in showback, free in stripe mode)")
	fs.DurationVar(&c.BillingGrace, "billing-grace", DefaultBillingGrace, "how long an org whose payment is past due keeps working before it turns read-only")
	fs.StringVar(&c.StripeAPIKey, "stripe-api-key", "", "Stripe secret key (stripe mode)")
	fs.StringVar(&c.StripeWebhookSecret, "stripe-webhook-secret", "", "signing secret of the Stripe webhook endpoint /api/billing/stripe/webhook")
	fs.StringVar(&c.StripeAPIBase, "stripe-api-base", "https://api.stripe.com", "Stripe API base URL (a stripe-mock address in tests)")
}

// validateBilling checks the billing settings; the plans file is read here
// so a broken file stops the start instead of billing with defaults.
func (c *Config) validateBilling() []error {
	var errs []error
	mode, err := billing.ParseMode(c.Billing)
	if err != nil {
		return []error{err}
	}
	if c.BillingGrace < 0 {
		errs = append(errs, errors.New("billing-grace must not be negative"))
	}
	if _, err := c.billingCatalog(); err != nil {
		errs = append(errs, err)
	}
	if mode == billing.ModeStripe {
		if c.StripeAPIKey == "" {
			errs = append(errs, errors.New("billing=stripe needs --stripe-api-key"))
		}
		if c.StripeWebhookSecret == "" {
			errs = append(errs, errors.New("billing=stripe needs --stripe-webhook-secret (the endpoint's signing secret)"))
		}
		if u, err := url.Parse(c.StripeAPIBase); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("stripe-api-base must be an absolute http(s) URL, not %q", c.StripeAPIBase))
		}
	}
	return errs
}

// billingCatalog is the built-in plans overlaid by --billing-plans, with
// the default plan checked against it.
func (c *Config) billingCatalog() (*billing.Catalog, error) {
	var operator []*billing.Plan
	if c.BillingPlans != "" {
		var err error
		if operator, err = billing.LoadPlansFile(c.BillingPlans); err != nil {
			return nil, err
		}
	}
	cat, err := billing.NewCatalog(operator)
	if err != nil {
		return nil, err
	}
	if _, ok := cat.Get(c.billingDefaultPlan()); !ok {
		return nil, fmt.Errorf("billing-default-plan %q is not a plan", c.billingDefaultPlan())
	}
	return cat, nil
}

func (c *Config) billingDefaultPlan() string {
	switch {
	case c.BillingDefaultPlan != "":
		return c.BillingDefaultPlan
	case c.Billing == string(billing.ModeStripe):
		return "free"
	}
	return "unlimited"
}
