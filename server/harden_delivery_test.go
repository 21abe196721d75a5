package server_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	stripewebhook "github.com/stripe/stripe-go/v85/webhook"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/server/webhook"
)

// signDelivery signs body for a webhook's scheme the way its provider does.
func signDelivery(scheme, secret string, body []byte, h http.Header) http.Header {
	out := h.Clone()
	switch webhook.Scheme(scheme) {
	case webhook.SchemeStripe: // a fresh timestamp: a re-signed replay
		sp := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: time.Now()})
		out.Set("Stripe-Signature", sp.Header)
	case webhook.SchemeGitHub:
		out.Set("X-Hub-Signature-256", "sha256="+hmacSHA256Hex([]byte(secret), body))
	case webhook.SchemePagerDuty:
		out.Set("X-PagerDuty-Signature", "v1="+hmacSHA256Hex([]byte(secret), body))
	case webhook.SchemeGitLab:
		out.Set("X-Gitlab-Token", secret)
	case webhook.SchemeSentry:
		out.Set("Sentry-Hook-Signature", hmacSHA256Hex([]byte(secret), body))
	}
	return out
}

// A delivery replayed after the dedupe window, with the provider's own
// delivery identity unchanged, is answered as the duplicate it is (same
// event, duplicate "idempotency_key") and starts nothing; a new delivery
// identity with the same body is a new event.
func TestWebhookProviderDeliveryIdentityStopsLateReplays(t *testing.T) {
	t.Parallel()
	// A model that answers: with none, the first run's failure would hold the
	// org's later webhook runs (webhook_run_hold.go) and this counts runs.
	env := newEnv(t, withLLM(llmfake.New(t, llmfake.Always(llmfake.Text("looked")))))
	owner := env.register("owner@example.com")
	withProject(t, env, owner)
	type sender struct {
		name     string
		provider webhook.Provider
		headers  http.Header // the identity, for header-borne ones
	}
	senders := []sender{
		{"github", webhook.ProviderGitHub, http.Header{"X-Github-Delivery": {"72d3162e-cc78-11e3-81ab-4c9367dc0958"}}},
		{"gitlab idempotency-key", webhook.ProviderGitLab, http.Header{"Idempotency-Key": {"c6ad9a4c-7a4c-4c77-9d7e-3e4c3f0d2f10"}}},
		{"gitlab event uuid", webhook.ProviderGitLab, http.Header{"X-Gitlab-Event-Uuid": {"13792a34-cac6-4fda-95a8-c58e00a3954e"}}},
		{"sentry", webhook.ProviderSentry, http.Header{"Request-Id": {"8d5b9b0e-3a9d-4f7c-9a55-0c1f7f0a3e21"}}},
		{"stripe", webhook.ProviderStripe, nil},       // body id evt_...
		{"pagerduty", webhook.ProviderPagerDuty, nil}, // body event.id
	}
	type sent struct {
		f    *hookFixture
		body []byte
		h    http.Header
		id   string
	}
	var all []sent
	for _, s := range senders {
		f := newHook(t, env, owner, map[string]any{"provider": string(s.provider), "dedupe_window_seconds": 1})
		h := webhook.SampleHeaders(s.provider)
		for k, v := range s.headers {
			h[k] = v
		}
		body := webhook.Sample(s.provider)
		r := f.post(t, body, signDelivery(f.hook["scheme"].(string), f.secret, body, h))
		if r.Status != 202 || r.JSON()["duplicate"] != nil {
			t.Fatalf("%s first delivery: %d %s", s.name, r.Status, r.Body)
		}
		f.dispatch(t)
		all = append(all, sent{f: f, body: body, h: h, id: r.JSON()["event_id"].(string)})
	}
	time.Sleep(2500 * time.Millisecond) // past every dedupe window
	for i, s := range all {
		r := s.f.post(t, s.body, signDelivery(s.f.hook["scheme"].(string), s.f.secret, s.body, s.h))
		if r.Status != 202 || r.JSON()["event_id"] != s.id || r.JSON()["duplicate"] != "idempotency_key" {
			t.Errorf("%s replayed after the window: got %d %s, want 202 with event %s as an idempotency_key duplicate", senders[i].name, r.Status, r.Body, s.id)
		}
		s.f.dispatch(t)
		if n := len(s.f.events(t, "")); n != 1 {
			t.Errorf("%s: %d events stored, want 1", senders[i].name, n)
		}
		runs, err := env.DB.FindTaskRuns(t.Context(), orgOf(t, owner), s.f.task, 10)
		if err != nil || len(runs) != 1 {
			t.Errorf("%s: %d runs (%v), want 1", senders[i].name, len(runs), err)
		}
	}
	// A new delivery identity is a new delivery, even with the same body.
	gh := all[0]
	h := gh.h.Clone()
	h.Set("X-GitHub-Delivery", "0b989ba4-242f-11e5-81e1-0000000000aa")
	r := gh.f.post(t, gh.body, signDelivery(gh.f.hook["scheme"].(string), gh.f.secret, gh.body, h))
	if r.Status != 202 || r.JSON()["duplicate"] != nil || r.JSON()["event_id"] == gh.id {
		t.Fatalf("a new GitHub delivery: got %d %s, want a new event", r.Status, r.Body)
	}
	if !bytes.Equal(gh.body, webhook.Sample(webhook.ProviderGitHub)) {
		t.Fatal("the sample changed under the test")
	}
}
