package pipeline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/webhook"
)

// The hand-written writers must store exactly what encoding/json stored.

func marshalled(t *testing.T, v any) string {
	t.Helper()
	b, _ := json.Marshal(v)
	return string(b)
}

// providerEvents parses every provider payload of testdata.
func providerEvents(t *testing.T) []webhook.Event {
	t.Helper()
	var files []string
	for _, g := range []string{"../../../testdata/webhooks/*/*.json", "../testdata/samples/*.json"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	var out []webhook.Event
	hdrs := []http.Header{nil, {"X-Github-Event": {"pull_request"}}, {"X-Gitlab-Event": {"Pipeline Hook"}},
		{"Sentry-Hook-Resource": {"event_alert"}}}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range webhook.Providers() {
			for _, h := range hdrs {
				if ev, err := webhook.Parse(p, h, body); err == nil && len(ev.Alerts) > 0 {
					out = append(out, ev)
				}
			}
		}
	}
	jl, err := os.Open("../../../testdata/webhooks/alertmanager/deliveries-0.25.0.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer jl.Close()
	sc := bufio.NewScanner(jl)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var d struct{ Body json.RawMessage }
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		ev, err := webhook.Parse(webhook.ProviderAlertmanager, nil, d.Body)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	if len(out) < 20 {
		t.Fatalf("only %d events from testdata", len(out))
	}
	return out
}

var oddStrings = []string{"", "plain", `q"uo\te`, "<b>&amp;</b>", "tab\there\nnl", "\x00\x1f\x7f", "é ✓ 😀",
	"line\u2028sep\u2029", "bad \xff utf8 \xc3", `{}:{alertname="Disk", x="y"}`, "https://x.example/a?b=1&c=2"}

func TestAlertsJSONSameAsEncodingJSON(t *testing.T) {
	for _, ev := range providerEvents(t) {
		if got, want := alertsJSON(ev.Alerts), marshalled(t, ev.Alerts); got != want {
			t.Fatalf("%s %s:\n got %s\nwant %s", ev.Provider, ev.Type, got, want)
		}
	}
	times := []time.Time{{}, time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC),
		time.Unix(1_700_000_000, 0).UTC(), time.Unix(999_999_999_999, 0).UTC(), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600)), time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("UTC", 0))}
	alerts := [][]webhook.Alert{nil, {}, {{}}}
	for i, s := range oddStrings {
		a := webhook.Alert{Source: s, Title: s, Severity: "warning", Status: s, Fingerprint: s, GroupKey: s, Summary: s,
			Labels: map[string]string{s: s, "k" + s: "v", "z": s}, Links: []string{s, "x"}, StartsAt: times[i%len(times)]}
		alerts = append(alerts, []webhook.Alert{a}, []webhook.Alert{a, {Labels: map[string]string{}, Links: []string{}}})
	}
	for _, tm := range times {
		alerts = append(alerts, []webhook.Alert{{StartsAt: tm}})
	}
	for _, as := range alerts {
		if got, want := alertsJSON(as), marshalled(t, as); got != want {
			t.Fatalf("%+v:\n got %s\nwant %s", as, got, want)
		}
	}
}

// oldStoredHeaders is what Ingest stored before headersJSON.
func oldStoredHeaders(h http.Header) string {
	out := map[string]string{}
	for name, vals := range h {
		if webhook.IsCredentialHeader(name) || len(out) == maxHeaders {
			continue
		}
		v := strings.Join(vals, ", ")
		if len(v) > maxHeaderSz {
			v = v[:maxHeaderSz]
		}
		out[strings.ToLower(name)] = v
	}
	b, _ := json.Marshal(out)
	return string(b)
}

func TestHeadersJSONSameAsEncodingJSON(t *testing.T) {
	long := strings.Repeat("x<", 700)
	hs := []http.Header{
		{},
		{"Content-Type": {"application/json"}, "User-Agent": {"Alertmanager/0.25.0"}, "Authorization": {"Bearer s"},
			"X-Hub-Signature-256": {"sha256=ab"}, "Accept-Encoding": {"gzip", "br"}, "X-Long": {long}, "X-Odd": oddStrings},
		{"Stripe-Signature": {"t=1,v1=x"}, "X-Gitlab-Token": {"t"}, "X-Request-Id": {"r"}, "Cookie": {"a=b"}},
		{"X-Ünï": {"1"}, "x-b": {"2"}, "X-A\"q": {"3"}, "X-<&>": {"4"}, "X-Zz": {"5"}, "X-Z": {"6"}, "X-\u212a": {"7"}},
	}
	many := http.Header{}
	for i := 0; i < maxHeaders; i++ { // exactly the bound: which ones are kept does not depend on map order
		many.Set("X-H"+strings.Repeat("a", i), oddStrings[i%len(oddStrings)])
	}
	many.Set("Authorization", "Bearer x")
	hs = append(hs, many)
	for _, h := range hs {
		if got, want := headersJSON(h), oldStoredHeaders(h); got != want {
			t.Fatalf("%v:\n got %s\nwant %s", h, got, want)
		}
	}
	// Two spellings of one name: either value, as the map gave.
	for _, h := range []http.Header{{"X-Dup": {"a"}, "x-dup": {"b"}}, {"X-K": {"a"}, "X-\u212a": {"b"}}} {
		want := []string{oldStoredHeaders(h)}
		for len(want) < 2 { // the other order of the map
			if w := oldStoredHeaders(h); w != want[0] {
				want = append(want, w)
			}
		}
		if got := headersJSON(h); !slices.Contains(want, got) {
			t.Fatal(got, want)
		}
	}
}

func FuzzJSONString(f *testing.F) {
	for _, s := range oddStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s want %s", s, got, want)
		}
	})
}

// benchBody is the body .ci/bench's ingest row posts.
const benchBody = `{"version":"4","groupKey":"{}:{alertname=\"Diskrun1-0-1\"}","status":"firing","receiver":"opsagent","groupLabels":{"alertname":"Diskrun1-0-1"},"commonLabels":{"alertname":"Diskrun1-0-1","severity":"warning"},"commonAnnotations":{},"externalURL":"http://am:9093","alerts":[{"status":"firing","labels":{"alertname":"Diskrun1-0-1","instance":"db-run1-0-1"},"annotations":{"summary":"disk filling"},"startsAt":"2026-11-23T10:00:00Z","endsAt":"0001-01-01T00:00:00Z","fingerprint":"run1-0-1"}]}`

var benchHeaders = http.Header{"Authorization": {"Bearer whsec_x"}, "Content-Type": {"application/json"},
	"Content-Length": {"480"}, "Host": {"127.0.0.1:41234"}}

func BenchmarkParseBenchBody(b *testing.B) {
	for b.Loop() {
		if _, err := webhook.Parse(webhook.ProviderAlertmanager, benchHeaders, []byte(benchBody)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAlertsJSON(b *testing.B) {
	ev, _ := webhook.Parse(webhook.ProviderAlertmanager, nil, []byte(benchBody))
	b.Run("hand", func(b *testing.B) {
		for b.Loop() {
			_ = alertsJSON(ev.Alerts)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			m, _ := json.Marshal(ev.Alerts)
			_ = string(m)
		}
	})
}

func BenchmarkHeadersJSON(b *testing.B) {
	b.Run("hand", func(b *testing.B) {
		for b.Loop() {
			_ = headersJSON(benchHeaders)
		}
	})
	b.Run("map-encoding-json", func(b *testing.B) {
		for b.Loop() {
			_ = oldStoredHeaders(benchHeaders)
		}
	})
}
