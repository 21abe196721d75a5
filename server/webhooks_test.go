package server_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PagerDuty/go-pagerduty/webhookv3"
	"github.com/google/go-github/v84/github"
	stripewebhook "github.com/stripe/stripe-go/v85/webhook"

	"github.com/opsagent/opsagent/server/webhook"
	"github.com/opsagent/opsagent/store"
)

// Every provider's real sample, signed the way the provider signs it
// (with its own library where one exists), is accepted, stored redacted,
// normalized and dispatched; a flipped byte or wrong secret is 401 and
// stores nothing.
func TestWebhookProvidersSignedDeliveries(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	owner := env.register("owner@example.com")
	for _, p := range webhook.Providers() {
		t.Run(string(p), func(t *testing.T) {
			f := newHook(t, env, owner, map[string]any{"provider": string(p)})
			body := webhook.Sample(p)
			h := webhook.SampleHeaders(p)
			sign := func(secret string, b []byte) http.Header {
				out := h.Clone()
				switch webhook.Scheme(f.hook["scheme"].(string)) {
				case webhook.SchemeStripe:
					sp := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: b, Secret: secret, Timestamp: time.Now()})
					out.Set("Stripe-Signature", sp.Header)
				case webhook.SchemeGitHub:
					m := hmac.New(sha256.New, []byte(secret))
					m.Write(b)
					out.Set(github.SHA256SignatureHeader, "sha256="+hex.EncodeToString(m.Sum(nil)))
				case webhook.SchemePagerDuty:
					m := hmac.New(sha256.New, []byte(secret))
					m.Write(b)
					out.Set("X-PagerDuty-Signature", "v1="+hex.EncodeToString(m.Sum(nil)))
				case webhook.SchemeBearer:
					out.Set("Authorization", "Bearer "+secret)
				case webhook.SchemeHeaderToken:
					out.Set("X-Webhook-Token", secret)
				case webhook.SchemeGitLab:
					out.Set("X-Gitlab-Token", secret)
				case webhook.SchemeSentry:
					m := hmac.New(sha256.New, []byte(secret))
					m.Write(b)
					out.Set("Sentry-Hook-Signature", hex.EncodeToString(m.Sum(nil)))
				case webhook.SchemeHMACSHA256:
					m := hmac.New(sha256.New, []byte(secret))
					m.Write(b)
					out.Set("X-Webhook-Signature", "sha256="+hex.EncodeToString(m.Sum(nil)))
				}
				return out
			}
			// Token schemes do not cover the body; every signing scheme must
			// notice one flipped bit.
			switch webhook.Scheme(f.hook["scheme"].(string)) {
			case webhook.SchemeBearer, webhook.SchemeHeaderToken, webhook.SchemeGitLab:
			default:
				flipped := append([]byte{}, body...)
				flipped[len(flipped)/2] ^= 1
				if r := f.post(t, flipped, sign(f.secret, body)); r.Status != 401 {
					t.Fatalf("flipped byte: %d %s", r.Status, r.Body)
				}
			}
			if r := f.post(t, body, sign("whsec_wrong-secret-of-some-length", body)); r.Status != 401 {
				t.Fatalf("wrong secret: %d %s", r.Status, r.Body)
			}
			r := f.post(t, body, sign(f.secret, body))
			if r.Status != 202 {
				t.Fatalf("signed sample: %d %s", r.Status, r.Body)
			}
			// Validate with the providers' own verifiers where they exist.
			if p == webhook.ProviderStripe {
				hd := sign(f.secret, body)
				if _, err := stripewebhook.ConstructEventWithOptions(body, hd.Get("Stripe-Signature"), f.secret, stripewebhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true}); err != nil {
					t.Fatalf("stripe-go rejects the signature we accepted: %v", err)
				}
			}
			if p == webhook.ProviderPagerDuty {
				rq, _ := http.NewRequest("POST", "/", strings.NewReader(string(body)))
				rq.Header = sign(f.secret, body)
				if err := webhookv3.VerifySignature(rq, f.secret); err != nil {
					t.Fatalf("go-pagerduty rejects the signature we accepted: %v", err)
				}
			}
			f.dispatch(t)
			evs := f.events(t, "")
			if len(evs) != 1 {
				t.Fatalf("want exactly 1 stored event (failures store nothing), got %d", len(evs))
			}
			ev := f.owner.must(200, "GET", "/api/tasks/"+f.task+"/webhook/events/"+evs[0]["id"].(string), nil).JSON()
			if ev["verification"] != f.hook["scheme"] || ev["type"] == "" || ev["body"] == nil {
				t.Fatalf("event: %v", ev)
			}
			if _, ok := ev["headers"].(map[string]any)["authorization"]; ok {
				t.Fatal("credential header stored")
			}
			if d := ev["dispatch"].([]any); len(d) == 0 {
				t.Fatalf("nothing dispatched: %v", ev)
			}
			hk := f.owner.must(200, "GET", "/api/tasks/"+f.task+"/webhook", nil).JSON()
			if hk["verification_failures"].(map[string]any)["count"].(float64) < 1 || hk["secret"] != nil {
				t.Fatalf("webhook: %v", hk)
			}
		})
	}
}

// The test button signs a sample and sends it through the receiver.
func TestWebhookTestDelivery(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	owner := env.register("owner@example.com")
	for _, p := range []string{"stripe", "github", "pagerduty", "alertmanager"} {
		f := newHook(t, env, owner, map[string]any{"provider": p})
		r := owner.must(202, "POST", "/api/tasks/"+f.task+"/webhook/test", nil).JSON()
		if r["status"] != "accepted" || r["type"] == "" {
			t.Fatalf("%s test: %v", p, r)
		}
		if evs := f.events(t, ""); len(evs) != 1 || evs[0]["test"] != true {
			t.Fatalf("%s events: %v", p, evs)
		}
	}
}

// Unknown, foreign, disabled webhook and disabled task all answer the same
// 404; non-JSON is 422 (raw for generic); oversize 413; rate limit 429.
func TestWebhookBadInput(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	owner := env.register("owner@example.com")
	f := newHook(t, env, owner, map[string]any{"provider": "alertmanager", "rate_limit_per_minute": 6, "dedupe_window_seconds": 0})
	unknown := postDelivery(t, env.URL+"/api/webhooks/"+store.NewID(), amAlert("g", "f", "firing"), bearer(f.secret))
	if unknown.Status != 404 {
		t.Fatalf("unknown: %d", unknown.Status)
	}
	other := env.register("other@example.com")
	withProject(t, env, other)
	noHook := createTask(t, other, map[string]any{"name": "x", "prompt": "y"})["id"].(string)
	foreign := postDelivery(t, env.URL+"/api/webhooks/"+noHook, amAlert("g", "f", "firing"), bearer(f.secret))
	if foreign.Status != 404 || string(foreign.Body) != string(unknown.Body) {
		t.Fatalf("task without webhook: %d %s vs %s", foreign.Status, foreign.Body, unknown.Body)
	}
	if r := postDelivery(t, env.URL+"/api/webhooks/not-a-uuid", nil, nil); r.Status != 404 {
		t.Fatalf("malformed id: %d", r.Status)
	}
	if r := f.post(t, []byte("not json"), bearer(f.secret)); r.Status != 422 {
		t.Fatalf("non-JSON: %d %s", r.Status, r.Body)
	} // counts against the limit of 6: it was verified

	if r := f.post(t, amAlert("g", "f", "firing"), nil); r.Status != 401 {
		t.Fatalf("no credential: %d", r.Status)
	}
	big := append([]byte(`{"alerts":[],"pad":"`), make([]byte, 1<<20)...)
	if r := f.post(t, big, bearer(f.secret)); r.Status != 413 {
		t.Fatalf("oversize: %d", r.Status)
	}
	for i := 0; i < 5; i++ {
		if r := f.post(t, amAlert("g", fmt.Sprint(i), "firing"), bearer(f.secret)); r.Status != 202 {
			t.Fatalf("delivery %d: %d %s", i, r.Status, r.Body)
		}
	}
	r := f.post(t, amAlert("g", "x", "firing"), bearer(f.secret))
	if r.Status != 429 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("over the limit: %d %v", r.Status, r.Header)
	}
	// Disabled webhook, then disabled task: 404 like an unknown task, nothing stored.
	owner.must(200, "PUT", "/api/tasks/"+f.task+"/webhook", map[string]any{"enabled": false})
	if r := f.post(t, amAlert("g", "y", "firing"), bearer(f.secret)); r.Status != 404 || string(r.Body) != string(unknown.Body) {
		t.Fatalf("disabled webhook: %d %s", r.Status, r.Body)
	}
	owner.must(200, "PUT", "/api/tasks/"+f.task+"/webhook", map[string]any{"enabled": true})
	owner.must(200, "PATCH", "/api/tasks/"+f.task, map[string]any{"enabled": false})
	time.Sleep(1100 * time.Millisecond) // the receiver's config cache lives one second
	if r := f.post(t, amAlert("g", "z", "firing"), bearer(f.secret)); r.Status != 404 {
		t.Fatalf("disabled task: %d %s", r.Status, r.Body)
	}
	if n := len(f.events(t, "")); n != 5 { // the verified deliveries within the limit
		t.Fatalf("want 5 stored events, got %d", n)
	}
	// Generic provider: a body that is not JSON is stored raw.
	g := newHook(t, env, owner, map[string]any{"provider": "generic", "scheme": "header_token"})
	if r := g.post(t, []byte("plain text alert"), http.Header{"X-Webhook-Token": {g.secret}}); r.Status != 202 {
		t.Fatalf("generic raw: %d %s", r.Status, r.Body)
	}
	if evs := g.events(t, ""); len(evs) != 1 || evs[0]["raw"] != true || evs[0]["type"] != "generic.raw" {
		t.Fatalf("generic raw events: %v", evs)
	}
}

// A hundred copies of one delivery at the same moment are stored once and
// dispatched once; identical payloads inside the dedupe window count once.
func TestWebhookIdempotencyAndDedupe(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	owner := env.register("owner@example.com")
	f := newHook(t, env, owner, map[string]any{"provider": "generic", "scheme": "bearer", "rate_limit_per_minute": 10000, "dedupe_window_seconds": 0})
	var wg sync.WaitGroup
	ids := make([]string, 100)
	start := make(chan struct{})
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			h := bearer(f.secret)
			h.Set("X-Idempotency-Key", "delivery-42")
			r := f.post(t, []byte(fmt.Sprintf(`{"title":"disk full","n":%d}`, i)), h)
			if r.Status != 202 {
				t.Errorf("copy %d: %d %s", i, r.Status, r.Body)
				return
			}
			ids[i] = r.JSON()["event_id"].(string)
		}()
	}
	close(start)
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("copies answered different events: %s vs %s", id, ids[0])
		}
	}
	f.dispatch(t)
	evs := f.events(t, "")
	if len(evs) != 1 || len(evs[0]["dispatch"].([]any)) != 1 {
		t.Fatalf("want 1 event dispatched once, got %v", evs)
	}
	runs, err := env.DB.FindTaskRuns(t.Context(), f.hook["project_id"].(string)[:0]+orgOf(t, owner), f.task, 200)
	if err != nil || len(runs) != 1 || runs[0].TriggerSource != "webhook" {
		t.Fatalf("runs: %v %v", runs, err)
	}
	if !strings.Contains(runs[0].FirstPrompt, "disk full") {
		t.Fatalf("the run does not carry the alert: %q", runs[0].FirstPrompt)
	}
	// Dedupe window: the same payload twice counts once.
	owner.must(200, "PUT", "/api/tasks/"+f.task+"/webhook", map[string]any{"dedupe_window_seconds": 60})
	a := f.post(t, []byte(`{"title":"same"}`), bearer(f.secret)).JSON()
	b := f.post(t, []byte(`{"title":"same"}`), bearer(f.secret)).JSON()
	if a["event_id"] != b["event_id"] || b["duplicate"] != "dedupe" {
		t.Fatalf("dedupe: %v %v", a, b)
	}
}

// Redaction globs are validated on save and applied before storage;
// metadata-only keeps no body once dispatched.
func TestWebhookRedactionAndMetadataOnly(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	owner := env.register("owner@example.com")
	withProject(t, env, owner)
	task := createTask(t, owner, map[string]any{"name": "x", "prompt": "y"})["id"].(string)
	wantValidation(t, owner.do("PUT", "/api/tasks/"+task+"/webhook", map[string]any{"provider": "alertmanager", "redact_globs": []string{"alerts..token"}}), "body", "redact_globs", 0)
	wantValidation(t, owner.do("PUT", "/api/tasks/"+task+"/webhook", map[string]any{"provider": "alertmanager", "retention_days": 6}), "body", "retention_days")
	f := newHook(t, env, owner, map[string]any{"provider": "alertmanager", "redact_globs": []string{"alerts.*.annotations.token"}})
	f.post(t, amAlert("g1", "f1", "firing"), bearer(f.secret))
	f.dispatch(t)
	ev := owner.must(200, "GET", "/api/tasks/"+f.task+"/webhook/events/"+f.events(t, "")[0]["id"].(string), nil).JSON()
	if body := ev["body"].(string); strings.Contains(body, "s3cr3t-token") || !strings.Contains(body, webhook.Redacted) {
		t.Fatalf("not redacted: %s", body)
	}
	owner.must(200, "PUT", "/api/tasks/"+f.task+"/webhook", map[string]any{"metadata_only": true})
	f.post(t, amAlert("g2", "f2", "firing"), bearer(f.secret))
	f.dispatch(t)
	evs := f.events(t, "")
	if evs[0]["body_kept"] != false || evs[0]["status"] == "received" {
		t.Fatalf("metadata-only kept the body: %v", evs[0])
	}
	r := owner.must(202, "POST", "/api/tasks/"+f.task+"/webhook/events/"+evs[0]["id"].(string)+"/replay", nil).JSON()
	if r["items"].([]any)[0].(map[string]any)["status"] != "body_not_kept" {
		t.Fatalf("replay of metadata-only: %v", r)
	}
}

// Rotation keeps the previous secret valid for the overlap, then not.
func TestWebhookSecretRotation(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.UseClock()
	owner := env.register("owner@example.com")
	f := newHook(t, env, owner, map[string]any{"provider": "alertmanager", "dedupe_window_seconds": 0})
	old := f.secret
	rot := owner.must(200, "POST", "/api/tasks/"+f.task+"/webhook/rotate-secret", map[string]any{"overlap_seconds": 3600}).JSON()
	cur := rot["secret"].(string)
	if cur == old || rot["previous_secret_valid_until"] == nil {
		t.Fatalf("rotate: %v", rot)
	}
	for _, s := range []string{old, cur} {
		if r := f.post(t, amAlert("g", s[:8], "firing"), bearer(s)); r.Status != 202 {
			t.Fatalf("during overlap: %d", r.Status)
		}
	}
	env.Advance(time.Hour + time.Second) // past the overlap, and the receiver's config cache
	if r := f.post(t, amAlert("g", "late-old", "firing"), bearer(old)); r.Status != 401 {
		t.Fatalf("old secret after the overlap: %d", r.Status)
	}
	if r := f.post(t, amAlert("g", "late-new", "firing"), bearer(cur)); r.Status != 202 {
		t.Fatalf("new secret: %d", r.Status)
	}
}

// A storm of 500 Alertmanager deliveries of one group is one incident and
// one run; resolving files the summary in the incidents collection.
func TestWebhookAlertStormIsOneIncident(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	owner := env.register("owner@example.com")
	f := newHook(t, env, owner, map[string]any{"provider": "alertmanager", "rate_limit_per_minute": 100000})
	if f.hook["correlate"] != true {
		t.Fatal("correlation must be on by default for alertmanager")
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := 0; i < 500; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if r := f.post(t, amAlert(`{}:{alertname=HighLatency}`, fmt.Sprintf("fp%03d", i), "firing"), bearer(f.secret)); r.Status != 202 {
				t.Errorf("alert %d: %d", i, r.Status)
			}
		}()
	}
	wg.Wait()
	f.dispatch(t)
	var page struct {
		Items []map[string]any `json:"items"`
	}
	owner.must(200, "GET", "/api/incidents", nil).decode(t, &page)
	if len(page.Items) != 1 || page.Items[0]["alert_count"].(float64) != 500 || page.Items[0]["session_id"] == nil {
		t.Fatalf("incidents: %v", page.Items)
	}
	runs, _ := env.DB.FindTaskRuns(t.Context(), orgOf(t, owner), f.task, 1000)
	if len(runs) != 1 {
		t.Fatalf("want 1 investigation, got %d runs", len(runs))
	}
	id := page.Items[0]["id"].(string)
	owner.must(200, "POST", "/api/incidents/"+id+"/acknowledge", nil)
	owner.must(409, "POST", "/api/incidents/"+id+"/acknowledge", nil)
	owner.must(201, "POST", "/api/incidents/"+id+"/notes", map[string]any{"text": "rolled back deploy 42"})
	owner.must(200, "POST", "/api/incidents/"+id+"/resolve", map[string]any{"summary": "bad deploy; rolled back"})
	owner.must(409, "POST", "/api/incidents/"+id+"/resolve", map[string]any{})
	inc := owner.must(200, "GET", "/api/incidents/"+id, nil).JSON()
	kinds := map[string]int{}
	for _, e := range inc["timeline"].([]any) {
		kinds[e.(map[string]any)["kind"].(string)]++
	}
	if kinds["alert"] != 500 || kinds["session"] != 1 || kinds["note"] != 1 || kinds["status"] != 2 {
		t.Fatalf("timeline kinds: %v", kinds)
	}
	// The summary is in the project's incidents collection, found by search
	// at once (and by nobody outside the project).
	var found struct {
		Items []map[string]any `json:"items"`
	}
	owner.must(200, "GET", "/api/knowledge/search?q=rolled+back+deploy&collection=incidents", nil).decode(t, &found)
	if len(found.Items) == 0 || found.Items[0]["name"] != id+".md" || found.Items[0]["collection"] != "incidents" {
		t.Fatalf("resolved incident not found by knowledge search: %v", found.Items)
	}
	doc := owner.must(200, "GET", "/api/knowledge/documents/by-name?collection=incidents&name="+id+".md", nil).JSON()
	if !strings.Contains(fmt.Sprint(doc["content"]), "bad deploy; rolled back") || !strings.Contains(fmt.Sprint(doc["content"]), "HighLatency") {
		t.Fatalf("archived document: %v", doc)
	}
	stranger := env.register("stranger@example.com")
	withProject(t, env, stranger)
	stranger.must(200, "GET", "/api/knowledge/search?q=rolled+back+deploy", nil).decode(t, &found)
	if len(found.Items) != 0 {
		t.Fatalf("another tenant finds the incident: %v", found.Items)
	}
	// After resolution the same group opens a new incident.
	f.post(t, amAlert(`{}:{alertname=HighLatency}`, "fp-new", "firing"), bearer(f.secret))
	f.dispatch(t)
	owner.must(200, "GET", "/api/incidents?status=triggered", nil).decode(t, &page)
	if len(page.Items) != 1 || page.Items[0]["id"] == id {
		t.Fatalf("after resolve: %v", page.Items)
	}
}
