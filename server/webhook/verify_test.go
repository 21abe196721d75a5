package webhook

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PagerDuty/go-pagerduty/webhookv3"
	"github.com/google/go-github/v84/github"
	stripewebhook "github.com/stripe/stripe-go/v85/webhook"
)

var (
	now      = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	current  = []byte("whsec_current_0123456789")
	previous = []byte("whsec_previous_9876543210")
	wrong    = []byte("whsec_wrong_secret")
	rotation = [][]byte{current, previous}
	testBody = []byte(`{"receiver":"ops-agent","status":"firing","alerts":[]}`)
	flipped  = flipByte(testBody)
	hexHMAC  = func(key, body []byte) string {
		m := hmac.New(sha256.New, key)
		m.Write(body)
		return hex.EncodeToString(m.Sum(nil))
	}
	stripeSig = func(key []byte, ts time.Time, body []byte) string {
		return stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{
			Payload: body, Secret: string(key), Timestamp: ts}).Header
	}
)

func flipByte(b []byte) []byte {
	c := bytes.Clone(b)
	c[len(c)/2] ^= 0x01
	return c
}

// signer builds the headers a provider would send for body under key.
type signer func(key, body []byte) http.Header

var signers = map[Scheme]signer{
	SchemeBearer:      func(k, _ []byte) http.Header { return hdr("Authorization", "Bearer "+string(k)) },
	SchemeHeaderToken: func(k, _ []byte) http.Header { return hdr("X-Webhook-Token", string(k)) },
	SchemeGitLab:      func(k, _ []byte) http.Header { return hdr("X-Gitlab-Token", string(k)) },
	SchemeHMACSHA256:  func(k, b []byte) http.Header { return hdr("X-Webhook-Signature", "sha256="+hexHMAC(k, b)) },
	SchemeGitHub:      func(k, b []byte) http.Header { return hdr("X-Hub-Signature-256", "sha256="+hexHMAC(k, b)) },
	SchemeSentry:      func(k, b []byte) http.Header { return hdr("Sentry-Hook-Signature", hexHMAC(k, b)) },
	SchemePagerDuty:   func(k, b []byte) http.Header { return hdr("X-PagerDuty-Signature", "v1="+hexHMAC(k, b)) },
	SchemeStripe:      func(k, b []byte) http.Header { return hdr("Stripe-Signature", stripeSig(k, now.Add(-time.Minute), b)) },
}

// bodyBound reports whether a scheme's credential covers the body.
func bodyBound(s Scheme) bool {
	return s != SchemeBearer && s != SchemeHeaderToken && s != SchemeGitLab
}

func TestVerifyEveryScheme(t *testing.T) {
	if len(signers) != len(Schemes())-1 {
		t.Fatalf("signers cover %d schemes, want every scheme but none (%d)", len(signers), len(Schemes())-1)
	}
	for scheme, sign := range signers {
		t.Run(string(scheme), func(t *testing.T) {
			check := func(name string, h http.Header, body []byte, secrets [][]byte, want *Error) {
				t.Helper()
				err := Verify(scheme, secrets, h, body, now)
				if want == nil && err != nil {
					t.Errorf("%s: got %v, want accept", name, err)
				}
				if want != nil && !errors.Is(err, want) {
					t.Errorf("%s: got %v, want %s", name, err, want.Code)
				}
				if err != nil && strings.Contains(err.Error(), string(current)) {
					t.Errorf("%s: error leaks the secret: %v", name, err)
				}
			}
			check("current secret", sign(current, testBody), testBody, rotation, nil)
			check("previous secret during rotation", sign(previous, testBody), testBody, rotation, nil)
			check("previous secret after rotation", sign(previous, testBody), testBody, [][]byte{current}, ErrMismatch)
			check("wrong secret", sign(wrong, testBody), testBody, rotation, ErrMismatch)
			check("missing header", http.Header{}, testBody, rotation, ErrMissing)
			check("no secret configured", sign(current, testBody), testBody, [][]byte{nil, {}}, ErrNoSecret)
			if bodyBound(scheme) {
				check("flipped body byte", sign(current, testBody), flipped, rotation, ErrMismatch)
			}
		})
	}
}

func TestVerifySchemeNoneAndUnknown(t *testing.T) {
	if err := Verify(SchemeNone, nil, http.Header{}, testBody, now); err != nil {
		t.Errorf("none: got %v, want accept", err)
	}
	for _, s := range []Scheme{"", "basic", "NONE"} {
		if err := Verify(s, rotation, http.Header{}, testBody, now); !errors.Is(err, ErrUnsupported) {
			t.Errorf("scheme %q: got %v, want unsupported", s, err)
		}
	}
}

func TestVerifyMalformedHeaders(t *testing.T) {
	cases := []struct {
		scheme Scheme
		h      http.Header
	}{
		{SchemeBearer, hdr("Authorization", "Basic dXNlcjpwYXNz")},
		{SchemeBearer, hdr("Authorization", "Bearer")},
		{SchemeHMACSHA256, hdr("X-Webhook-Signature", hexHMAC(current, testBody))}, // no sha256= prefix
		{SchemeGitHub, hdr("X-Hub-Signature-256", "sha256=zz")},
		{SchemeGitHub, hdr("X-Hub-Signature-256", "sha1="+hexHMAC(current, testBody))},
		{SchemePagerDuty, hdr("X-PagerDuty-Signature", "v0=abc,v2=def")},
		{SchemeStripe, hdr("Stripe-Signature", "v1="+hexHMAC(current, testBody))},
		{SchemeStripe, hdr("Stripe-Signature", "t=abc,v1="+hexHMAC(current, testBody))},
		{SchemeStripe, hdr("Stripe-Signature", "t=1795351200,v0=00")},
	}
	for _, c := range cases {
		err := Verify(c.scheme, rotation, c.h, testBody, now)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeMalformed || e.HTTPStatus() != http.StatusUnauthorized {
			t.Errorf("%s %v: got %v, want signature_malformed (401)", c.scheme, c.h, err)
		}
	}
}

func TestVerifyBearerIsCaseInsensitiveOnTheScheme(t *testing.T) {
	if err := Verify(SchemeBearer, rotation, hdr("Authorization", "bearer "+string(current)), nil, now); err != nil {
		t.Errorf("got %v, want accept", err)
	}
	if err := Verify(SchemeBearer, rotation, hdr("Authorization", "Bearer "+string(current)+"x"), nil, now); !errors.Is(err, ErrMismatch) {
		t.Errorf("longer token: got %v, want mismatch", err)
	}
}

func TestVerifyStripeWindow(t *testing.T) {
	for _, tc := range []struct {
		name string
		ts   time.Time
		want *Error
	}{
		{"just now", now, nil},
		{"299 s old", now.Add(-299 * time.Second), nil},
		{"299 s ahead", now.Add(299 * time.Second), nil},
		{"301 s old", now.Add(-301 * time.Second), ErrStale},
		{"a day old", now.Add(-24 * time.Hour), ErrStale},
		{"301 s ahead", now.Add(301 * time.Second), ErrStale},
		{"a year ahead", now.AddDate(1, 0, 0), ErrStale},
	} {
		h := hdr("Stripe-Signature", stripeSig(current, tc.ts, testBody))
		err := Verify(SchemeStripe, rotation, h, testBody, now)
		if (tc.want == nil && err != nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
	// A stale header signed with the wrong secret is a mismatch: only an
	// authentic sender learns about its clock.
	h := hdr("Stripe-Signature", stripeSig(wrong, now.Add(-time.Hour), testBody))
	if err := Verify(SchemeStripe, rotation, h, testBody, now); !errors.Is(err, ErrMismatch) {
		t.Errorf("stale and wrong: got %v, want mismatch", err)
	}
}

// Stripe sends one v1 per active secret while a secret is rolled.
func TestVerifyStripeSeveralV1(t *testing.T) {
	ts := now.Add(-10 * time.Second)
	a := stripeSig(wrong, ts, testBody)
	b := stripeSig(previous, ts, testBody)
	_, v1b, _ := strings.Cut(b, ",")
	h := hdr("Stripe-Signature", a+","+v1b)
	if err := Verify(SchemeStripe, [][]byte{previous}, h, testBody, now); err != nil {
		t.Errorf("got %v, want accept", err)
	}
	// The signed timestamp is part of the MAC: moving it breaks the signature.
	moved := strings.Replace(b, "t="+strconv.FormatInt(ts.Unix(), 10), "t="+strconv.FormatInt(ts.Unix()+1, 10), 1)
	if err := Verify(SchemeStripe, [][]byte{previous}, hdr("Stripe-Signature", moved), testBody, now); !errors.Is(err, ErrMismatch) {
		t.Errorf("moved timestamp: got %v, want mismatch", err)
	}
}

// Our Stripe verdicts agree with stripe-go's own verifier inside the window.
func TestVerifyStripeAgreesWithStripeGo(t *testing.T) {
	real := time.Now()
	for _, key := range [][]byte{current, wrong} {
		for _, body := range [][]byte{testBody, flipped} {
			header := stripeSig(key, real.Add(-time.Minute), testBody)
			theirs := stripewebhook.ValidatePayload(body, header, string(current))
			ours := Verify(SchemeStripe, [][]byte{current}, hdr("Stripe-Signature", header), body, real)
			if (theirs == nil) != (ours == nil) {
				t.Errorf("stripe-go says %v, we say %v", theirs, ours)
			}
		}
	}
}

// Our GitHub verdicts agree with go-github's ValidatePayload on real requests.
func TestVerifyGitHubAgreesWithGoGitHub(t *testing.T) {
	for _, key := range [][]byte{current, wrong} {
		for _, body := range [][]byte{testBody, flipped} {
			sig := "sha256=" + hexHMAC(key, testBody)
			r := httptest.NewRequest(http.MethodPost, "/api/webhooks/x", bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set(github.SHA256SignatureHeader, sig)
			_, theirs := github.ValidatePayload(r, current)
			ours := Verify(SchemeGitHub, [][]byte{current}, r.Header, body, now)
			if (theirs == nil) != (ours == nil) {
				t.Errorf("go-github says %v, we say %v", theirs, ours)
			}
		}
	}
}

// Our PagerDuty verdicts agree with go-pagerduty's webhookv3, including
// the comma-separated list PagerDuty sends while a secret is rotated.
func TestVerifyPagerDutyAgreesWithWebhookV3(t *testing.T) {
	headers := []string{
		"v1=" + hexHMAC(current, testBody),
		"v1=" + hexHMAC(wrong, testBody) + ",v1=" + hexHMAC(current, testBody),
		"v1=" + hexHMAC(wrong, testBody),
		"v0=" + hexHMAC(current, testBody),
	}
	for _, hv := range headers {
		for _, body := range [][]byte{testBody, flipped} {
			r := httptest.NewRequest(http.MethodPost, "/api/webhooks/x", bytes.NewReader(body))
			r.Header.Set("X-PagerDuty-Signature", hv)
			theirs := webhookv3.VerifySignature(r, string(current))
			ours := Verify(SchemePagerDuty, [][]byte{current}, r.Header, body, now)
			if (theirs == nil) != (ours == nil) {
				t.Errorf("header %.20s...: webhookv3 says %v, we say %v", hv, theirs, ours)
			}
		}
	}
}

func TestParseScheme(t *testing.T) {
	for _, s := range Schemes() {
		if got, err := ParseScheme(string(s)); err != nil || got != s {
			t.Errorf("ParseScheme(%q) = %q, %v", s, got, err)
		}
	}
	if _, err := ParseScheme("md5"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("got %v, want unsupported", err)
	}
	for _, p := range Providers() {
		if _, err := ParseScheme(string(DefaultScheme(p))); err != nil {
			t.Errorf("default scheme of %s: %v", p, err)
		}
	}
}
