package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	stripewebhook "github.com/stripe/stripe-go/v85/webhook"

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
	// The port is picked free and then handed to stripe-mock, so another
	// test can take it in between: a stripe-mock that exits before it
	// answers is started again on a new port.
	for attempt := 1; ; attempt++ {
		if base, ok := startStripeMock(t, bin); ok {
			return base
		}
		if attempt == 3 {
			t.Fatalf("stripe-mock did not start (3 attempts)")
		}
	}
}

// startStripeMock runs stripe-mock on a free loopback port and waits until
// it answers; false when it exited first (its port was taken meanwhile).
func startStripeMock(t *testing.T, bin string) (string, bool) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "-http-addr", addr)
	var out bytes.Buffer // read only after it exited
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	base := "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); ; {
		req, _ := http.NewRequest("GET", base+"/v1/customers", nil)
		req.Header.Set("Authorization", "Bearer sk_test_123")
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			return base, true
		}
		select {
		case <-exited:
			t.Logf("stripe-mock at %s exited before answering: %s", addr, out.Bytes())
			return "", false
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("stripe-mock did not start at %s", addr)
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
