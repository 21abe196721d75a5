package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/webhook"
	"github.com/opsagent/opsagent/store"
)

// Opts say what kind of delivery Ingest takes.
type Opts struct {
	Test         bool   // a test delivery from the management API
	ReplayOf     string // the event this one replays
	SkipVerify   bool   // replays: the original was verified
	Verification string // with SkipVerify: how the original was verified
}

// Ack is the outcome of an accepted delivery.
type Ack struct {
	EventID   string // the stored event (for a duplicate: the event it duplicates)
	Duplicate string // idempotency_key or dedupe when this delivery was not stored again
}

// RateLimited refuses a delivery over its webhook's rate limit (429).
type RateLimited struct{ RetryAfter time.Duration }

func (e *RateLimited) Error() string { return "rate limited" }

// Invalid refuses a delivery that cannot be processed (422): Loc names the
// header or the body, as FastAPI's error locations do.
type Invalid struct {
	Msg, Type string
	Loc       []any
}

func (e *Invalid) Error() string { return e.Msg }

// Ingest is the receiver's pipeline after Lookup: verify, rate-limit,
// redact, normalize, plan, store durably (group commit) and acknowledge;
// dispatch follows. Test deliveries and replays go through it too, so what
// they prove is what live traffic gets.
func (p *Pipeline) Ingest(ctx context.Context, st *Hook, h http.Header, body []byte, o Opts) (*Ack, error) {
	p.arriving.Add(1) // on its way to the writer (submit counts it off)
	submitted := false
	defer func() {
		if !submitted {
			p.arriving.Add(-1) // refused before submit
		}
	}()
	hook := st.Webhook
	now := p.d.Now()
	verification := o.Verification
	if !o.SkipVerify {
		if err := webhook.Verify(webhook.Scheme(hook.Scheme), st.Secrets, h, body, now); err != nil {
			code := webhook.ErrorCode(err)
			p.recordFailure(hook.TaskID, code, now)
			return nil, &store.Error{Code: store.EUnauthorized, Message: err.Error(), Reason: string(code)}
		}
		verification = hook.Scheme
	}
	if !o.Test && o.ReplayOf == "" {
		if ok, retry := st.limiter.Allow(hook.TaskID); !ok {
			return nil, &RateLimited{RetryAfter: retry}
		}
	}
	idem := strings.TrimSpace(h.Get("X-Idempotency-Key"))
	if len(idem) > maxIdemKey || strings.ContainsFunc(idem, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return nil, &Invalid{Msg: "X-Idempotency-Key must be at most 200 printable characters", Type: "value_error", Loc: []any{"header", "x-idempotency-key"}}
	}
	sum := sha256.Sum256(body)
	ev := &store.WebhookEvent{ID: store.NewID(), OrgID: hook.OrgID, ProjectID: hook.ProjectID, TaskID: hook.TaskID,
		Provider: hook.Provider, IdemKey: idem, BodyHash: hex.EncodeToString(sum[:]), Verification: verification,
		BodySize: len(body), Test: o.Test, ReplayOf: o.ReplayOf}
	// One decode per delivery when no redaction is configured: Parse
	// validates the JSON as it decodes it. With globs, the redacted copy
	// is what gets parsed, so normalized alerts never hold a redacted value.
	stored, parsed, err := redactAndParse(hook, h, body)
	switch {
	case err == nil:
		ev.Type = parsed.Type
		ev.Alerts = alertsJSON(parsed.Alerts)
	case hook.Provider == string(webhook.ProviderGeneric) && webhook.ErrorCode(err) == webhook.CodeInvalidPayload && !json.Valid(body):
		// The generic provider keeps what it cannot read as raw text:
		// redaction globs cannot apply, so the body is stored as received.
		stored, ev.Raw, ev.Type, ev.Alerts = body, true, "generic.raw", "[]"
		parsed = webhook.Event{Provider: webhook.ProviderGeneric, Type: ev.Type, Alerts: []webhook.Alert{}}
	default:
		return nil, &Invalid{Msg: err.Error(), Type: "value_error.webhook_payload", Loc: []any{"body"}}
	}
	ev.Body = stored
	ev.Headers = headersJSON(h)
	if parsed.Delivery != "" && o.ReplayOf == "" && !o.Test {
		// The provider's own delivery identity is the idempotency key: a
		// replay of a captured delivery is a duplicate for as long as the
		// event is kept, not only within the dedupe window.
		ev.IdemKey = string(parsed.Provider) + ":" + parsed.Delivery
	}
	// The plan is made here, on the request's goroutine; the writer applies
	// it in the ingest transaction when the webhook has no rules.
	plan := p.planEvent(ev, hook, nil, parsed, nil)
	item := store.IngestItem{Event: ev, Plan: &plan, HookUpdatedAt: hook.UpdatedAt}
	if o.ReplayOf == "" && !o.Test {
		item.DedupeWindow = time.Duration(hook.DedupeSeconds) * time.Second
	}
	submitted = true
	res, err := p.submit(ctx, item, parsed)
	if err != nil {
		return nil, err
	}
	if res.Err != nil {
		if store.IsNotFound(res.Err) {
			p.Forget(hook.TaskID)
			return nil, ErrNotFound
		}
		return nil, res.Err
	}
	return &Ack{EventID: res.ID, Duplicate: res.Duplicate}, nil
}

// redactAndParse applies the webhook's redaction globs (when it has any)
// and normalizes the result.
func redactAndParse(hook *store.Webhook, h http.Header, body []byte) ([]byte, webhook.Event, error) {
	stored := body
	if len(hook.RedactGlobs) > 0 {
		var err error
		if stored, err = webhook.Redact(body, hook.RedactGlobs); err != nil {
			return nil, webhook.Event{}, err
		}
	}
	ev, err := webhook.Parse(webhook.Provider(hook.Provider), h, stored)
	return stored, ev, err
}

// StoredHeaders reads back the headers Ingest kept for an event (replays
// send them again).
func StoredHeaders(js string) http.Header {
	hdr := http.Header{}
	var hm map[string]string
	_ = json.Unmarshal([]byte(js), &hm)
	for k, v := range hm {
		hdr.Set(k, v)
	}
	return hdr
}
