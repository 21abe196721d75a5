package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Seed corpora come from testdata, so `go test` runs every sample through
// each target and `go test -fuzz=FuzzParseGitHub` starts from real payloads.

func seedFiles(f *testing.F, patterns ...string) [][]byte {
	f.Helper()
	var out [][]byte
	for _, p := range patterns {
		files, err := filepath.Glob(testdataPath(p))
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		f.Fatalf("no seeds for %v", patterns)
	}
	return out
}

// fuzzParse checks the invariants every parser keeps on any input: no
// panic, errors are 422 *Errors, alerts are normalized.
func fuzzParse(f *testing.F, p Provider, eventHeader string, patterns ...string) {
	for _, b := range seedFiles(f, patterns...) {
		f.Add(b, "")
	}
	f.Add([]byte(`{}`), "")
	f.Add([]byte(`{"alerts":[null,{}],"data":{"issue":{}}}`), "x")
	f.Fuzz(func(t *testing.T, body []byte, event string) {
		h := http.Header{}
		if eventHeader != "" && event != "" {
			h.Set(eventHeader, event)
		}
		ev, err := Parse(p, h, body)
		if err != nil {
			if !errors.Is(err, ErrInvalidPayload) {
				t.Fatalf("error %v is not invalid_payload", err)
			}
			return
		}
		if ev.Provider != p || len(ev.Alerts) > MaxAlerts {
			t.Fatalf("provider %q, %d alerts", ev.Provider, len(ev.Alerts))
		}
		for _, a := range ev.Alerts {
			if !slices.Contains([]string{SeverityCritical, SeverityError, SeverityWarning, SeverityInfo}, a.Severity) ||
				(a.Status != StatusFiring && a.Status != StatusResolved) || a.Labels == nil || a.Links == nil || a.Source == "" {
				t.Fatalf("alert not normalized: %+v", a)
			}
		}
		// Whatever parses must also build a condition env.
		NewEnv(ev, body, h)
	})
}

func FuzzParseAlertmanager(f *testing.F) {
	fuzzParse(f, ProviderAlertmanager, "", "samples/alertmanager.json", "alertmanager/*.json")
}
func FuzzParseGrafana(f *testing.F) {
	fuzzParse(f, ProviderGrafana, "", "samples/grafana.json", "grafana/*.json")
}
func FuzzParseDatadog(f *testing.F) {
	fuzzParse(f, ProviderDatadog, "", "samples/datadog.json", "datadog/*.json")
}
func FuzzParseSentry(f *testing.F) {
	fuzzParse(f, ProviderSentry, "Sentry-Hook-Resource", "samples/sentry.json", "sentry/*.json")
}
func FuzzParsePagerDuty(f *testing.F) {
	fuzzParse(f, ProviderPagerDuty, "", "samples/pagerduty.json", "pagerduty/*.json")
}
func FuzzParseGitHub(f *testing.F) {
	fuzzParse(f, ProviderGitHub, "X-GitHub-Event", "samples/github.json", "github/*.json")
}
func FuzzParseGitLab(f *testing.F) {
	fuzzParse(f, ProviderGitLab, "X-Gitlab-Event", "samples/gitlab.json", "gitlab/*.json")
}
func FuzzParseStripe(f *testing.F) {
	fuzzParse(f, ProviderStripe, "", "samples/stripe.json", "stripe/*.json")
}
func FuzzParseGeneric(f *testing.F) {
	fuzzParse(f, ProviderGeneric, "", "samples/*.json", "generic/*.json")
}

func FuzzRedact(f *testing.F) {
	globs := []string{"**.password", "alerts.*.annotations.token", "a", "*", "**.*tok*", `app\.io`, "a..b", "**", "x.**.y"}
	for i, b := range seedFiles(f, "samples/*.json", "generic/*.json", "alertmanager/*.json") {
		f.Add(b, globs[i%len(globs)])
	}
	f.Add([]byte(`[1,"a",{"a":[{"password":null}]}]`), "**.password")
	f.Add([]byte(`"just a string"`), "*")
	f.Fuzz(func(t *testing.T, body []byte, g string) {
		out, err := Redact(body, []string{g})
		if err != nil {
			if !errors.Is(err, ErrInvalidPayload) && !errors.Is(err, ErrInvalidGlob) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			if errors.Is(err, ErrInvalidGlob) != (ValidateGlob(g) != nil) {
				t.Fatalf("ValidateGlob disagrees with Redact: %v", err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("output is not JSON: %q", out)
		}
		again, err := Redact(out, []string{g})
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("redaction is not idempotent:\n%q\n%q (%v)", out, again, err)
		}
	})
}

func FuzzCondition(f *testing.F) {
	for _, s := range []string{
		`alert.severity == "critical"`, `any(alerts, .status == "firing")`, `payload.a?.b == 1`,
		`headers["x"] contains "y"`, `event startsWith "incident."`, `len(alerts) > 1 and alert.labels.x in ["a"]`,
		`count(alerts, .labels.env == "prod") > 0 ? true : false`, `1..3 | all(# > 0)`, `alert.title matches "(a|b)+"`,
		`string(payload.attempts) == "3"`, `filter(alerts, .severity == "info")[0].title == "x"`,
	} {
		f.Add(s)
	}
	body := readTestdata(f, "alertmanager/multi-firing.json")
	ev, err := Parse(ProviderAlertmanager, nil, body)
	if err != nil {
		f.Fatal(err)
	}
	env := NewEnv(ev, body, hdr("User-Agent", "Alertmanager/0.25.0"))
	f.Fuzz(func(t *testing.T, src string) {
		c, err := CompileCondition(src)
		if err != nil {
			if !errors.Is(err, ErrInvalidCondition) {
				t.Fatalf("compile error %v is not invalid_condition", err)
			}
			return
		}
		if _, err := c.Match(env); err != nil && !errors.Is(err, ErrConditionEval) {
			t.Fatalf("match error %v is not condition_eval", err)
		}
	})
}

func FuzzVerifyHeaders(f *testing.F) {
	f.Add(string(SchemeStripe), "t=1795351200,v1=00,v1=zz", []byte(`{}`))
	f.Add(string(SchemePagerDuty), "v1=abc,v1=", []byte(`{}`))
	f.Add(string(SchemeBearer), "Bearer  x ", []byte(nil))
	f.Add(string(SchemeGitHub), "sha256=", []byte(`{}`))
	names := map[Scheme]string{SchemeStripe: "Stripe-Signature", SchemePagerDuty: "X-PagerDuty-Signature",
		SchemeBearer: "Authorization", SchemeGitHub: "X-Hub-Signature-256", SchemeHMACSHA256: "X-Webhook-Signature",
		SchemeGitLab: "X-Gitlab-Token", SchemeHeaderToken: "X-Webhook-Token", SchemeSentry: "Sentry-Hook-Signature"}
	f.Fuzz(func(t *testing.T, scheme, value string, body []byte) {
		name, ok := names[Scheme(scheme)]
		if !ok {
			return
		}
		err := Verify(Scheme(scheme), rotation, hdr(name, value), body, now)
		if err == nil {
			// Only the real secrets may pass; a fuzzer cannot find an HMAC.
			if !bytes.Contains([]byte(value), current) && !bytes.Contains([]byte(value), previous) {
				t.Fatalf("accepted %s %q", scheme, value)
			}
			return
		}
		var e *Error
		if !errors.As(err, &e) || e.HTTPStatus() != http.StatusUnauthorized {
			t.Fatalf("error %v is not a 401 *Error", err)
		}
	})
}
