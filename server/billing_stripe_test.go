package server_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsagent/opsagent/store"
)

// TestBillingStripeFlow drives checkout, the portal, signed subscription
// and invoice events, the past-due grace and read-only, a downgrade that
// waits for the use to fit, and usage reporting, against stripe-mock.
func TestBillingStripeFlow(t *testing.T) {
	base := stripeMock(t)
	env := billingEnv(t, "stripe", "tiny", stripeConfig(base))
	c := env.register("pay@example.com")
	org := c.orgOf()
	ctx := context.Background()
	proj := c.must(201, "POST", "/api/projects", map[string]any{"name": "first"}).JSON()["id"].(string)

	if r := c.do("PUT", "/api/billing/plan", map[string]any{"plan_id": "pro"}); r.Status != 409 || r.JSON()["code"] != "checkout_required" {
		t.Fatalf("switching to a paid plan directly: got %d %s, want 409 checkout_required", r.Status, r.Body)
	}
	wantValidation(t, c.do("POST", "/api/billing/checkout", map[string]any{"plan_id": "platinum"}), "body", "plan_id")
	co := c.must(200, "POST", "/api/billing/checkout", map[string]any{"plan_id": "pro"}).JSON()
	if !strings.HasPrefix(co["id"].(string), "cs_") || !strings.HasPrefix(co["url"].(string), "https://") {
		t.Fatalf("checkout: %v", co)
	}
	a, err := env.DB.FindBillingAccount(ctx, org)
	if err != nil || !strings.HasPrefix(a.StripeCustomerID, "cus_") {
		t.Fatalf("customer not linked: %+v %v", a, err)
	}
	cust := a.StripeCustomerID
	if u := c.must(200, "POST", "/api/billing/portal", nil).JSON()["url"].(string); u == "" {
		t.Fatalf("portal url empty")
	}
	plan := func() map[string]any { return c.must(200, "GET", "/api/billing", nil).JSON() }

	// Checkout completed: the org is on pro.
	done := stripeEventBody("evt_co", "checkout.session.completed", map[string]any{"id": "cs_1", "object": "checkout.session",
		"customer": cust, "subscription": "sub_1", "client_reference_id": org, "metadata": map[string]any{"plan_id": "pro"}})
	if r := sendStripe(t, env, done, stripeSecret, time.Now()); r.Status != 200 {
		t.Fatalf("checkout event: got %d %s", r.Status, r.Body)
	}
	if got := plan()["plan"].(map[string]any)["id"]; got != "pro" {
		t.Fatalf("plan after checkout: got %v, want pro", got)
	}
	if r := c.do("PUT", "/api/billing/plan", map[string]any{"plan_id": "roomy"}); r.Status != 409 || r.JSON()["code"] != "subscription_active" {
		t.Fatalf("switching plans around an active subscription: got %d %s, want 409 subscription_active", r.Status, r.Body)
	}

	// Forged, stale and future-dated events change nothing (401).
	cancel := stripeEventBody("evt_del", "customer.subscription.deleted", subscription("sub_1", cust, "price_pro", "canceled"))
	for name, r := range map[string]*resp{
		"wrong secret": sendStripe(t, env, cancel, "whsec_forged", time.Now()),
		"stale":        sendStripe(t, env, cancel, stripeSecret, time.Now().Add(-10*time.Minute)),
		"future":       sendStripe(t, env, cancel, stripeSecret, time.Now().Add(10*time.Minute)),
		"unsigned":     postDelivery(t, env.URL+"/api/billing/stripe/webhook", cancel, nil),
	} {
		if r.Status != 401 {
			t.Fatalf("%s event: got %d, want 401", name, r.Status)
		}
	}
	if p := plan(); p["plan"].(map[string]any)["id"] != "pro" || p["status"] != "active" {
		t.Fatalf("a refused event changed the account: %v", p)
	}

	// Usage-based price: runs reported as meter events, once.
	for range 3 {
		s := &store.AgentSession{OrgID: org, ProjectID: proj, Source: "webchat", Status: "completed"}
		if err := env.DB.Write(ctx, func(tx *store.Tx) error { return store.CreateAgentSessionTx(ctx, tx, s) }); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := env.Srv.RunStripeUsageReport(ctx); err != nil {
			t.Fatalf("usage report: %v", err)
		}
	}
	if v, _ := env.DB.StripeReported(ctx, org, store.Period(time.Now()), "agent_runs"); v != 3 {
		t.Fatalf("reported runs: got %g, want 3", v)
	}

	// Payment fails: past due, still working during the grace period.
	if r := sendStripe(t, env, stripeEventBody("evt_fail", "invoice.payment_failed", map[string]any{"id": "in_1", "object": "invoice", "customer": cust}), stripeSecret, time.Now()); r.Status != 200 {
		t.Fatalf("payment_failed: %d %s", r.Status, r.Body)
	}
	if p := plan(); p["status"] != "past_due" || p["grace_ends_at"] == nil || p["read_only"] != false {
		t.Fatalf("after a failed payment: %v", p)
	}
	keep := c.must(201, "POST", "/api/projects", map[string]any{"name": "during grace"}).JSON()["id"].(string)

	// After the grace period: read-only (402), reads and billing still work.
	env.UseClock()
	env.Advance(8 * 24 * time.Hour)
	c.refresh()
	if r := c.do("POST", "/api/projects", map[string]any{"name": "after grace"}); r.Status != 402 || r.JSON()["code"] != "billing_read_only" {
		t.Fatalf("create after the grace: got %d %s, want 402 billing_read_only", r.Status, r.Body)
	}
	if r := c.do("DELETE", "/api/projects/"+keep, nil); r.Status != 402 {
		t.Fatalf("delete while read-only: got %d, want 402 (nothing is lost)", r.Status)
	}
	if n := len(c.must(200, "GET", "/api/projects", nil).List()); n < 2 {
		t.Fatalf("projects readable while read-only: got %d", n)
	}
	if p := plan(); p["read_only"] != true {
		t.Fatalf("read_only not reported: %v", p)
	}
	c.must(200, "POST", "/api/billing/portal", nil)

	// Paid again: writable.
	paid := stripeEventBody("evt_paid", "invoice.paid", map[string]any{"id": "in_2", "object": "invoice", "customer": cust})
	for range 2 { // a retried delivery is acknowledged and applied once
		if r := sendStripe(t, env, paid, stripeSecret, env.clock()); r.Status != 200 {
			t.Fatalf("invoice.paid: %d %s", r.Status, r.Body)
		}
	}
	if p := plan(); p["status"] != "active" || p["read_only"] != false {
		t.Fatalf("after payment: %v", p)
	}
	c.must(201, "POST", "/api/projects", map[string]any{"name": "paid again"})

	// Subscription cancelled while using more than the free plan allows:
	// explained and pending, applied once the use fits.
	if r := sendStripe(t, env, stripeEventBody("evt_del2", "customer.subscription.deleted", subscription("sub_1", cust, "price_pro", "canceled")), stripeSecret, env.clock()); r.Status != 200 {
		t.Fatalf("subscription.deleted: %d %s", r.Status, r.Body)
	}
	p := plan()
	if p["plan"].(map[string]any)["id"] != "pro" || p["pending_plan_id"] != "tiny" || !strings.Contains(p["pending_reason"].(string), "projects") {
		t.Fatalf("downgrade below use: %v", p)
	}
	for _, pr := range c.must(200, "GET", "/api/projects", nil).List()[2:] {
		c.must(204, "DELETE", "/api/projects/"+pr["id"].(string), nil)
	}
	if p := plan(); p["plan"].(map[string]any)["id"] != "tiny" || p["pending_plan_id"] != "" {
		t.Fatalf("pending downgrade not applied once the use fits: %v", p)
	}
	audit := c.must(200, "GET", "/api/audit-logs?action=billing.stripe_event", nil)
	if !strings.Contains(string(audit.Body), "invoice.payment_failed") {
		t.Fatalf("stripe events not audited: %s", audit.Body)
	}
}

// TestBillingStripeUnreachable: Stripe failing is retried with back-off;
// when it stays down the request says so (503) and the org keeps working
// on its plan.
func TestBillingStripeUnreachable(t *testing.T) {
	base := stripeMock(t)
	target, _ := url.Parse(base)
	var calls, failFirst atomic.Int32
	failFirst.Store(2)
	proxy := httputil.NewSingleHostReverseProxy(target)
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if failFirst.Add(-1) >= 0 {
			http.Error(w, `{"error":{"type":"api_error","message":"overloaded"}}`, http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer flaky.Close()
	env := billingEnv(t, "stripe", "tiny", stripeConfig(flaky.URL))
	c := env.register("flaky@example.com")
	c.must(200, "POST", "/api/billing/checkout", map[string]any{"plan_id": "pro"})
	if n := calls.Load(); n < 4 {
		t.Fatalf("got %d calls to Stripe, want the 2 failures retried (customer, then session)", n)
	}

	// Stripe down: a listener that hangs up on every connection. A closed
	// server's port, as before, could be bound by another test's server in
	// the meantime, which then answered for Stripe.
	down, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	go func() {
		for {
			conn, err := down.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	downURL := "http://" + down.Addr().String()
	env2 := billingEnv(t, "stripe", "tiny", stripeConfig(downURL))
	d := env2.register("down@example.com")
	r := d.do("POST", "/api/billing/checkout", map[string]any{"plan_id": "pro"})
	if r.Status != 503 || r.JSON()["code"] != "stripe_unreachable" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("checkout with Stripe down: got %d %s, want 503 stripe_unreachable with Retry-After", r.Status, r.Body)
	}
	d.must(201, "POST", "/api/projects", map[string]any{"name": fmt.Sprintf("still working %d", 1)})
	if got := d.must(200, "GET", "/api/billing", nil).JSON()["plan"].(map[string]any)["id"]; got != "tiny" {
		t.Fatalf("plan with Stripe down: %v", got)
	}
}
