package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	stripewebhook "github.com/stripe/stripe-go/v85/webhook"

	"github.com/opsagent/opsagent/internal/testkit"
	"github.com/opsagent/opsagent/server"
)

const stripeSecret = "whsec_test_billing"

// stripeMock starts Stripe's official API mock (stripe-mock) on a loopback
// port and returns its base URL. CI installs it (.ci/run) and sets
// OPSAGENT_REQUIRE_STRIPE_MOCK=1, so it is never skipped there.
func stripeMock(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("stripe-mock")
	if err != nil {
		gopath, _ := exec.Command("go", "env", "GOPATH").Output()
		cand := filepath.Join(string(trimNL(gopath)), "bin", "stripe-mock")
		if _, serr := os.Stat(cand); serr == nil {
			bin, err = cand, nil
		}
	}
	if err != nil {
		if os.Getenv("OPSAGENT_REQUIRE_STRIPE_MOCK") != "" {
			t.Fatalf("stripe-mock is required here but not installed: go install github.com/stripe/stripe-mock@v0.203.0")
		}
		t.Skip("stripe-mock not installed (go install github.com/stripe/stripe-mock@v0.203.0); .ci/run installs it")
	}
	return startStripeMock(t, bin)
}

// startStripeMock runs stripe-mock on a loopback port it picks itself (a
// port picked free by the test could be taken before stripe-mock bound
// it, as once in CI), reads the address from its log and waits until it
// answers.
func startStripeMock(t *testing.T, bin string) string {
	cmd := exec.Command(bin, "-http-addr", "127.0.0.1:0")
	out := &testkit.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	base := "http://" + childAddr(t, "stripe-mock", out, stripeMockListening, exited)
	for deadline := time.Now().Add(30 * time.Second); ; {
		req, _ := http.NewRequest("GET", base+"/v1/customers", nil)
		req.Header.Set("Authorization", "Bearer sk_test_123")
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			return base
		}
		select {
		case <-exited:
			t.Fatalf("stripe-mock at %s exited: %s", base, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("stripe-mock at %s did not answer: %s", base, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// stripeConfig turns on stripe mode against base.
func stripeConfig(base string) func(*server.Config) {
	return func(c *server.Config) {
		c.StripeAPIKey, c.StripeWebhookSecret, c.StripeAPIBase = "sk_test_123", stripeSecret, base
	}
}

// stripeEventBody is a Stripe Event object of typ about obj.
func stripeEventBody(id, typ string, obj map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"id": id, "object": "event", "type": typ, "api_version": "2025-01-27.acacia",
		"created": time.Now().Unix(), "livemode": false, "data": map[string]any{"object": obj}})
	return b
}

// sendStripe posts body to the billing webhook signed by stripe-go's test
// signer with secret at ts.
func sendStripe(t *testing.T, env *testEnv, body []byte, secret string, ts time.Time) *resp {
	t.Helper()
	sp := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: ts})
	return postDelivery(t, env.URL+"/api/billing/stripe/webhook", body, http.Header{"Stripe-Signature": {sp.Header}})
}

// subscription is a Subscription object on price for customer.
func subscription(id, customer, price, status string) map[string]any {
	return map[string]any{"id": id, "object": "subscription", "customer": customer, "status": status,
		"items": map[string]any{"object": "list", "data": []any{map[string]any{"id": "si_1", "price": map[string]any{"id": price}}}}}
}

var _ = context.Background
var _ = fmt.Sprintf
