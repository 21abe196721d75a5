package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Scheme names how a sender proves it knows the webhook's secret.
// The zero value is invalid on purpose: "no verification" must be chosen
// explicitly as SchemeNone.
type Scheme string

const (
	// SchemeBearer: "Authorization: Bearer <secret>" (Alertmanager, Grafana).
	SchemeBearer Scheme = "bearer"
	// SchemeHeaderToken: "X-Webhook-Token: <secret>" (Datadog custom headers).
	SchemeHeaderToken Scheme = "header_token"
	// SchemeHMACSHA256: "X-Webhook-Signature: sha256=<hex HMAC-SHA256(secret, body)>".
	SchemeHMACSHA256 Scheme = "hmac_sha256"
	// SchemeGitHub: "X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>".
	SchemeGitHub Scheme = "github"
	// SchemeGitLab: "X-Gitlab-Token: <secret>".
	SchemeGitLab Scheme = "gitlab"
	// SchemeStripe: "Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, t.body)>[,v1=...]",
	// timestamp within StripeTolerance of now in either direction.
	SchemeStripe Scheme = "stripe"
	// SchemePagerDuty: "X-PagerDuty-Signature: v1=<hex HMAC-SHA256(secret, body)>[,v1=...]".
	SchemePagerDuty Scheme = "pagerduty"
	// SchemeSentry: "Sentry-Hook-Signature: <hex HMAC-SHA256(secret, body)>"
	// (Sentry integration platform; an addition to the spec's list).
	SchemeSentry Scheme = "sentry"
	// SchemeNone accepts every request. Only valid when configured explicitly.
	SchemeNone Scheme = "none"
)

// StripeTolerance is the replay window for Stripe signatures. Stripe's own
// library only rejects old timestamps; we also reject ones from the future,
// so a signature minted with a skewed clock cannot be banked for later.
const StripeTolerance = 300 * time.Second

// maxSignatures bounds the work an attacker can cause with a header
// listing many candidate signatures.
const maxSignatures = 8

// Schemes lists every scheme Verify knows, for validation on save and for
// the OpenAPI enum.
func Schemes() []Scheme {
	return []Scheme{SchemeBearer, SchemeHeaderToken, SchemeHMACSHA256, SchemeGitHub,
		SchemeGitLab, SchemeStripe, SchemePagerDuty, SchemeSentry, SchemeNone}
}

// ParseScheme validates a scheme name from configuration.
func ParseScheme(s string) (Scheme, error) {
	for _, sc := range Schemes() {
		if string(sc) == s {
			return sc, nil
		}
	}
	return "", newError(CodeUnsupported, "unknown verification scheme "+strconv.Quote(s))
}

// Verify checks that the request headers carry a credential for body made
// with one of secrets. secrets holds the current secret and, during a
// rotation overlap, the previous one; empty entries are ignored. now is
// injected so replay windows are testable. Every comparison is constant
// time. The returned error is an *Error with one of the verification codes
// (all map to 401) and never contains secret material.
func Verify(scheme Scheme, secrets [][]byte, h http.Header, body []byte, now time.Time) error {
	if scheme == SchemeNone {
		return nil
	}
	if _, err := ParseScheme(string(scheme)); err != nil {
		return err
	}
	keys := nonEmpty(secrets)
	if len(keys) == 0 {
		return newError(CodeNoSecret, "webhook has no secret configured for scheme "+string(scheme))
	}
	switch scheme {
	case SchemeBearer:
		v, err := header(h, "Authorization")
		if err != nil {
			return err
		}
		kind, tok, ok := strings.Cut(v, " ")
		if !ok || !strings.EqualFold(kind, "Bearer") || strings.TrimSpace(tok) == "" {
			return newError(CodeMalformed, "Authorization header is not a bearer token")
		}
		return matchToken(keys, strings.TrimSpace(tok))
	case SchemeHeaderToken:
		return verifyToken(h, "X-Webhook-Token", keys)
	case SchemeGitLab:
		return verifyToken(h, "X-Gitlab-Token", keys)
	case SchemeHMACSHA256:
		return verifyPrefixedHMAC(h, "X-Webhook-Signature", "sha256=", keys, body)
	case SchemeGitHub:
		return verifyPrefixedHMAC(h, "X-Hub-Signature-256", "sha256=", keys, body)
	case SchemeSentry:
		return verifyPrefixedHMAC(h, "Sentry-Hook-Signature", "", keys, body)
	case SchemePagerDuty:
		return verifyPagerDuty(h, keys, body)
	case SchemeStripe:
		return verifyStripe(h, keys, body, now)
	}
	return newError(CodeUnsupported, "unknown verification scheme "+strconv.Quote(string(scheme)))
}

func nonEmpty(secrets [][]byte) [][]byte {
	out := make([][]byte, 0, len(secrets))
	for _, s := range secrets {
		if len(s) > 0 {
			out = append(out, s)
		}
	}
	return out
}

func header(h http.Header, name string) (string, error) {
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		return "", newError(CodeMissing, name+" header is missing")
	}
	return v, nil
}

func verifyToken(h http.Header, name string, keys [][]byte) error {
	v, err := header(h, name)
	if err != nil {
		return err
	}
	return matchToken(keys, v)
}

// matchToken compares digests rather than the raw values so that neither
// the content nor the length of the secret leaks through timing.
func matchToken(keys [][]byte, tok string) error {
	got := sha256.Sum256([]byte(tok))
	ok := 0
	for _, k := range keys {
		want := sha256.Sum256(k)
		if hmac.Equal(got[:], want[:]) {
			ok = 1
		}
	}
	if ok == 1 {
		return nil
	}
	return newError(CodeMismatch, "token does not match")
}

func mac(key []byte, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

func verifyPrefixedHMAC(h http.Header, name, prefix string, keys [][]byte, body []byte) error {
	v, err := header(h, name)
	if err != nil {
		return err
	}
	hexSig, ok := strings.CutPrefix(v, prefix)
	if !ok {
		return newError(CodeMalformed, name+" header must start with "+strconv.Quote(prefix))
	}
	sig, err := hex.DecodeString(hexSig)
	if err != nil || len(sig) != sha256.Size {
		return newError(CodeMalformed, name+" header is not a hex SHA-256 digest")
	}
	return matchMAC(keys, [][]byte{sig}, body)
}

// matchMAC reports success when any candidate signature equals the HMAC of
// parts under any key.
func matchMAC(keys, sigs [][]byte, parts ...[]byte) error {
	for _, k := range keys {
		want := mac(k, parts...)
		for _, s := range sigs {
			if hmac.Equal(want, s) {
				return nil
			}
		}
	}
	return newError(CodeMismatch, "signature does not match")
}

// listedSigs extracts the hex signatures tagged with prefix from a
// comma-separated header ("v1=aa,v1=bb,v0=cc"); other tags are ignored
// as the providers specify, undecodable values are skipped.
func listedSigs(v, prefix string) [][]byte {
	var out [][]byte
	for _, part := range strings.Split(v, ",") {
		hexSig, ok := strings.CutPrefix(strings.TrimSpace(part), prefix)
		if !ok {
			continue
		}
		if sig, err := hex.DecodeString(hexSig); err == nil && len(sig) == sha256.Size {
			out = append(out, sig)
			if len(out) == maxSignatures {
				break
			}
		}
	}
	return out
}

func verifyPagerDuty(h http.Header, keys [][]byte, body []byte) error {
	v, err := header(h, "X-PagerDuty-Signature")
	if err != nil {
		return err
	}
	sigs := listedSigs(v, "v1=")
	if len(sigs) == 0 {
		return newError(CodeMalformed, "X-PagerDuty-Signature header has no v1 signature")
	}
	return matchMAC(keys, sigs, body)
}

func verifyStripe(h http.Header, keys [][]byte, body []byte, now time.Time) error {
	v, err := header(h, "Stripe-Signature")
	if err != nil {
		return err
	}
	var ts string
	for _, part := range strings.Split(v, ",") {
		if t, ok := strings.CutPrefix(strings.TrimSpace(part), "t="); ok {
			ts = t
			break
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return newError(CodeMalformed, "Stripe-Signature header has no valid t= timestamp")
	}
	sigs := listedSigs(v, "v1=")
	if len(sigs) == 0 {
		return newError(CodeMalformed, "Stripe-Signature header has no v1 signature")
	}
	// Signature first: only an authentic sender learns that its clock is off.
	if err := matchMAC(keys, sigs, []byte(ts), []byte("."), body); err != nil {
		return err
	}
	age := now.Sub(time.Unix(unix, 0))
	if age > StripeTolerance || age < -StripeTolerance {
		return newError(CodeStale, "Stripe-Signature timestamp is outside the 300 s window")
	}
	return nil
}
