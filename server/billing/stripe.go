package billing

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Stripe is a small client of the documented Stripe REST API
// (https://docs.stripe.com/api): form-encoded POSTs, bearer secret key,
// Idempotency-Key on every create so a retried request is applied once.
// It replaces stripe-go in the product binary: stripe-go's root package
// carries every Stripe resource type (1.57 MB stripped for the four calls
// we make, BENCHMARKS.md); stripe-go stays in the tests, which sign
// webhook events with its test signer.
type Stripe struct {
	apiKey string
	base   string
	HC     *http.Client
	// Attempts is how many times a request is tried when Stripe cannot be
	// reached or answers 429/5xx; Backoff is the first wait, doubled each time.
	Attempts int
	Backoff  time.Duration
}

// NewStripe returns a client of the Stripe API at base.
func NewStripe(apiKey, base string) *Stripe {
	return &Stripe{apiKey: apiKey, base: strings.TrimRight(base, "/"), HC: &http.Client{Timeout: 20 * time.Second},
		Attempts: 4, Backoff: 250 * time.Millisecond}
}

// StripeError is an error answer of the Stripe API, or ErrStripeUnreachable.
type StripeError struct {
	Status  int
	Type    string
	Code    string
	Message string
}

func (e *StripeError) Error() string {
	return fmt.Sprintf("stripe: %d %s: %s", e.Status, e.Type, e.Message)
}

// ErrStripeUnreachable: every attempt failed on the network or with 429/5xx.
var ErrStripeUnreachable = errors.New("stripe is unreachable")

// post sends one create to path and decodes the answer into out, retrying
// with exponential back-off while Stripe is unreachable or overloaded.
func (s *Stripe) post(ctx context.Context, path string, form url.Values, out any) error {
	body := form.Encode()
	// The key derives from the request itself: a retry (here or by a later
	// job run) of the same create is deduplicated by Stripe for 24 hours.
	sum := sha256.Sum256([]byte(path + "?" + body))
	idem := hex.EncodeToString(sum[:16])
	wait := s.Backoff
	var last error
	for attempt := 0; attempt < max(s.Attempts, 1); attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
			wait *= 2
		}
		retry, err := s.once(ctx, path, body, idem, out)
		if err == nil || !retry {
			return err
		}
		last = err
	}
	return fmt.Errorf("%w after %d attempts: %v", ErrStripeUnreachable, max(s.Attempts, 1), last)
}

func (s *Stripe) once(ctx context.Context, path, body, idem string, out any) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+path, strings.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Authorization", "Bearer "+s.apiKey)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Idempotency-Key", idem)
	res, err := s.HC.Do(req)
	if err != nil {
		return ctx.Err() == nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return true, err
	}
	if res.StatusCode >= 300 {
		var e struct {
			Error StripeError `json:"error"`
		}
		_ = json.Unmarshal(b, &e)
		e.Error.Status = res.StatusCode
		return res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500, &e.Error
	}
	if out == nil {
		return false, nil
	}
	return false, json.Unmarshal(b, out)
}

// CreateCustomer creates the Stripe customer of an org.
func (s *Stripe) CreateCustomer(ctx context.Context, orgID, name, email string) (string, error) {
	f := url.Values{"name": {name}, "metadata[org_id]": {orgID}}
	if email != "" {
		f.Set("email", email)
	}
	var out struct {
		ID string `json:"id"`
	}
	return out.ID, s.post(ctx, "/v1/customers", f, &out)
}

// CheckoutRequest is a subscription Checkout Session for one plan.
type CheckoutRequest struct {
	Customer, OrgID, PlanID string
	PriceID                 string   // the plan's flat recurring price
	MeteredPriceIDs         []string // usage-based prices (no quantity)
	SuccessURL, CancelURL   string
}

// CreateCheckoutSession returns the session id and the URL to send the customer to.
func (s *Stripe) CreateCheckoutSession(ctx context.Context, r CheckoutRequest) (id, checkoutURL string, err error) {
	f := url.Values{"mode": {"subscription"}, "customer": {r.Customer}, "client_reference_id": {r.OrgID},
		"success_url": {r.SuccessURL}, "cancel_url": {r.CancelURL},
		"metadata[org_id]": {r.OrgID}, "metadata[plan_id]": {r.PlanID},
		"subscription_data[metadata][org_id]": {r.OrgID}, "subscription_data[metadata][plan_id]": {r.PlanID},
		"line_items[0][price]": {r.PriceID}, "line_items[0][quantity]": {"1"}}
	for i, p := range r.MeteredPriceIDs {
		f.Set("line_items["+strconv.Itoa(i+1)+"][price]", p)
	}
	var out struct {
		ID  string `json:"id"`
		URL string `json:"url"`
	}
	err = s.post(ctx, "/v1/checkout/sessions", f, &out)
	return out.ID, out.URL, err
}

// CreatePortalSession returns a Customer Portal URL for customer.
func (s *Stripe) CreatePortalSession(ctx context.Context, customer, returnURL string) (string, error) {
	var out struct {
		URL string `json:"url"`
	}
	err := s.post(ctx, "/v1/billing_portal/sessions", url.Values{"customer": {customer}, "return_url": {returnURL}}, &out)
	return out.URL, err
}

// CreateMeterEvent reports value units of a usage-based price's meter.
// identifier makes the event idempotent on Stripe's side.
func (s *Stripe) CreateMeterEvent(ctx context.Context, eventName, customer string, value int64, identifier string, at time.Time) error {
	return s.post(ctx, "/v1/billing/meter_events", url.Values{"event_name": {eventName},
		"payload[stripe_customer_id]": {customer}, "payload[value]": {strconv.FormatInt(value, 10)},
		"identifier": {identifier}, "timestamp": {strconv.FormatInt(at.Unix(), 10)}}, nil)
}
