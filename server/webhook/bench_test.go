package webhook

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Figures for the record (go test -bench . -run '^$' ./server/webhook/);
// no test asserts on timing.

func body4KiB() []byte {
	b := bytes.Repeat([]byte(`{"k":"0123456789abcdef0123456789abcdef0123456789"},`), 82)
	return append(append([]byte(`{"items":[`), b[:len(b)-1]...), []byte(`]}`)...)[:4096]
}

func BenchmarkVerifyHMAC4KiB(b *testing.B) {
	body := body4KiB()
	h := signers[SchemeHMACSHA256](current, body)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if err := Verify(SchemeHMACSHA256, rotation, h, body, now); err != nil {
			b.Fatal(err)
		}
	}
}

// The previous secret costs a second HMAC: the rotation overlap price.
func BenchmarkVerifyHMAC4KiBPreviousSecret(b *testing.B) {
	body := body4KiB()
	h := signers[SchemeHMACSHA256](previous, body)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if err := Verify(SchemeHMACSHA256, rotation, h, body, now); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyStripe4KiB(b *testing.B) {
	body := body4KiB()
	h := http.Header{"Stripe-Signature": {stripeSig(current, now.Add(-time.Second), body)}}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if err := Verify(SchemeStripe, rotation, h, body, now); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyBearer(b *testing.B) {
	h := signers[SchemeBearer](current, nil)
	for b.Loop() {
		if err := Verify(SchemeBearer, rotation, h, nil, now); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseAlertmanager(b *testing.B) {
	body := readTestdata(b, "alertmanager/multi-firing.json")
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := Parse(ProviderAlertmanager, nil, body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRedactAlertmanager(b *testing.B) {
	body := readTestdata(b, "alertmanager/multi-firing.json")
	globs := []string{"alerts.*.annotations.token", "**.password"}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := Redact(body, globs); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConditionMatch(b *testing.B) {
	body := readTestdata(b, "alertmanager/multi-firing.json")
	ev, _ := Parse(ProviderAlertmanager, nil, body)
	env := NewEnv(ev, body, nil)
	c, err := CompileCondition(`alert.severity == "critical" && any(alerts, .labels.namespace == "payments")`)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if ok, err := c.Match(env); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// The most expensive condition the limits admit that we know of: a
// predicate near the length and node caps, each step case-folding 1 KiB
// strings, over the largest array the env view keeps. It shows how far
// below ConditionTimeout the static bounds keep evaluation.
func BenchmarkConditionWorstCase(b *testing.B) {
	item := `"` + strings.Repeat("abcdefgh", 128) + `"`
	body := []byte(`{"items":[` + strings.Repeat(item+",", 199) + item + `]}`)
	ev, err := Parse(ProviderGeneric, nil, body)
	if err != nil {
		b.Fatal(err)
	}
	env := NewEnv(ev, body, nil)
	src := "any(payload.items, " + strings.Repeat(`upper(#)+lower(#) contains "@" || `, 27) + "false)"
	c, err := CompileCondition(src)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if ok, err := c.Match(env); ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
