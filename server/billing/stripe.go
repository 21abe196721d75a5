package billing

// Stripe is the payment client of stripe mode (stripe_client.go).
type Stripe struct {
	APIKey string
	Base   string
}

// NewStripe returns a client of the Stripe API at base.
func NewStripe(apiKey, base string) *Stripe { return &Stripe{APIKey: apiKey, Base: base} }
