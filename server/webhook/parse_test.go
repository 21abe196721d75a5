package webhook

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// testdataPath finds a payload: the samples the binary embeds live beside
// the package (go:embed reaches no further); the providers' payloads, which
// other packages' tests replay too, in the top-level testdata/webhooks.
func testdataPath(name string) string {
	if strings.HasPrefix(name, "samples/") {
		return filepath.Join("testdata", name)
	}
	return filepath.Join("..", "..", "testdata", "webhooks", name)
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(testdataPath(name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestParseSamples(t *testing.T) {
	tests := []struct {
		provider Provider
		file     string
		header   http.Header
		typ      string
		n        int
		want     Alert // fields compared when non-zero
		label    [2]string
	}{
		{ProviderAlertmanager, "samples/alertmanager.json", nil, "alertmanager.firing", 1,
			Alert{Title: "HighCPU", Severity: "critical", Status: "firing", Fingerprint: "6ed9d525cf4d2d47",
				GroupKey: `{}:{alertname="HighCPU", service="api"}`, Summary: "CPU > 90%"}, [2]string{"service", "api"}},
		{ProviderAlertmanager, "alertmanager/multi-firing.json", nil, "alertmanager.firing", 3,
			Alert{Title: "KubePodCrashLooping", Severity: "critical", Fingerprint: "9a1f3c2be07d4e51"}, [2]string{"pod", "api-7d9f8c6b5-x2x9k"}},
		{ProviderGrafana, "samples/grafana.json", nil, "grafana.firing", 1,
			Alert{Title: "High p99 latency", Severity: "warning", Status: "firing", Fingerprint: "5c2f1d3e9a7b8c01",
				Summary: "checkout p99 latency is 1.82 s"}, [2]string{"service", "checkout"}},
		{ProviderGrafana, "grafana/legacy-alerting.json", nil, "grafana.firing", 1,
			Alert{Title: "Disk usage", Severity: "critical", Status: "firing", GroupKey: "7"}, [2]string{"team", "storage"}},
		{ProviderGrafana, "grafana/legacy-ok.json", nil, "grafana.resolved", 1,
			Alert{Title: "Disk usage", Status: "resolved", GroupKey: "7"}, [2]string{"state", "ok"}},
		{ProviderDatadog, "samples/datadog.json", nil, "datadog.triggered", 1,
			Alert{Title: "CPU usage is high on web-03", Severity: "critical", Status: "firing",
				Fingerprint: "datadog-98765432-host:web-03", GroupKey: "a1b2c3d4e5f60718"}, [2]string{"service", "web"}},
		{ProviderDatadog, "datadog/recovered.json", nil, "datadog.recovered", 1,
			Alert{Status: "resolved", Fingerprint: "datadog-98765432-host:web-03"}, [2]string{"env", "prod"}},
		{ProviderDatadog, "datadog/default-template.json", nil, "datadog.warn", 1,
			Alert{Title: "Disk space low on db-1", Severity: "warning", Status: "firing"}, [2]string{"transition", "Warn"}},
		{ProviderSentry, "samples/sentry.json", hdr("Sentry-Hook-Resource", "event_alert"), "sentry.event_alert.triggered", 1,
			Alert{Title: "ZeroDivisionError: division by zero", Severity: "error", Status: "firing",
				Fingerprint: "sentry-issue-4617380922", GroupKey: "Checkout errors in production"}, [2]string{"environment", "production"}},
		{ProviderSentry, "sentry/issue-resolved.json", hdr("Sentry-Hook-Resource", "issue"), "sentry.issue.resolved", 1,
			Alert{Status: "resolved", Fingerprint: "sentry-issue-4617380922"}, [2]string{"short_id", "CHECKOUT-2Q"}},
		{ProviderSentry, "sentry/metric-alert-critical.json", nil, "sentry.metric_alert.critical", 1,
			Alert{Title: "Critical: Error rate above 5%", Severity: "critical", Status: "firing"}, [2]string{"rule", "Error rate above 5%"}},
		{ProviderSentry, "sentry/legacy-plugin.json", nil, "sentry.alert", 1,
			Alert{Title: "Payment provider answered slowly", Severity: "warning", Fingerprint: "sentry-issue-27379932"}, [2]string{"project", "checkout"}},
		{ProviderPagerDuty, "samples/pagerduty.json", nil, "incident.triggered", 1,
			Alert{Title: "Checkout API error rate above 5%", Severity: "critical", Status: "firing",
				Fingerprint: "pagerduty-PGR0VU2", GroupKey: "d3640fbd41094207a1c11e58e46b1662"}, [2]string{"service", "Checkout API"}},
		{ProviderPagerDuty, "pagerduty/acknowledged.json", nil, "incident.acknowledged", 1,
			Alert{Status: "firing", Fingerprint: "pagerduty-PGR0VU2"}, [2]string{"incident_status", "acknowledged"}},
		{ProviderPagerDuty, "pagerduty/resolved.json", nil, "incident.resolved", 1,
			Alert{Status: "resolved", Fingerprint: "pagerduty-PGR0VU2"}, [2]string{"priority", "P1"}},
		{ProviderPagerDuty, "pagerduty/annotated.json", nil, "incident.annotated", 1,
			Alert{Title: "Checkout API error rate above 5%", Fingerprint: "pagerduty-PGR0VU2"}, [2]string{}},
		{ProviderGitHub, "samples/github.json", hdr("X-GitHub-Event", "workflow_run"), "workflow_run.completed", 1,
			Alert{Title: "example-corp/checkout: CI failure", Severity: "error", Status: "firing",
				Fingerprint: "github-example-corp/checkout-workflow_run-11893456721", GroupKey: "example-corp/checkout"}, [2]string{"branch", "main"}},
		{ProviderGitHub, "github/pull_request-opened.json", hdr("X-GitHub-Event", "pull_request"), "pull_request.opened", 1,
			Alert{Title: "example-corp/checkout: Retry payment provider calls with backoff", Severity: "info",
				Fingerprint: "github-example-corp/checkout-pull_request-318"}, [2]string{"sender", "grace-dev"}},
		{ProviderGitHub, "github/push.json", hdr("X-GitHub-Event", "push"), "push", 1,
			Alert{Title: "example-corp/checkout: push to refs/heads/main", Summary: "Bump checkout to 2.14.1"}, [2]string{"ref", "refs/heads/main"}},
		{ProviderGitLab, "samples/gitlab.json", hdr("X-Gitlab-Event", "Pipeline Hook"), "pipeline.success", 1,
			Alert{Title: "gitlab-org/gitlab-test: pipeline success", Status: "resolved", Fingerprint: "gitlab-gitlab-org/gitlab-test-pipeline-123"}, [2]string{"ref", "master"}},
		{ProviderGitLab, "gitlab/merge_request.json", hdr("X-Gitlab-Event", "Merge Request Hook"), "merge_request.open", 1,
			Alert{Status: "firing"}, [2]string{"state", "opened"}},
		{ProviderGitLab, "gitlab/build.json", hdr("X-Gitlab-Event", "Job Hook"), "build.created", 1,
			Alert{Title: "gitlab-org/gitlab-test: job test created"}, [2]string{"ref", "gitlab-script-trigger"}},
		{ProviderGitLab, "gitlab/vulnerability.json", hdr("X-Gitlab-Event", "Vulnerability Hook"), "vulnerability", 1,
			Alert{Title: "Potential SQL Injection", Severity: "error"}, [2]string{"state", "detected"}},
		{ProviderGitLab, "gitlab/push.json", hdr("X-Gitlab-Event", "Push Hook"), "push", 1,
			Alert{Title: "mike/diaspora: push to refs/heads/master"}, [2]string{"user", "jsmith"}},
		{ProviderStripe, "samples/stripe.json", nil, "payment_intent.payment_failed", 1,
			Alert{Severity: "error", Status: "firing", Fingerprint: "stripe-pi_3QNx2aLkdIwHu7ix0dJb6Ykq",
				GroupKey: "cus_R2x9Fh3kLmNp0Q", Summary: "Your card has insufficient funds."}, [2]string{"currency", "usd"}},
		{ProviderStripe, "stripe/payment_intent-succeeded.json", nil, "payment_intent.succeeded", 1,
			Alert{Severity: "info", Status: "resolved", Fingerprint: "stripe-pi_3QNx2aLkdIwHu7ix0dJb6Ykq"}, [2]string{"livemode", "false"}},
		{ProviderStripe, "stripe/charge-dispute-created.json", nil, "charge.dispute.created", 1,
			Alert{Severity: "critical", Status: "firing"}, [2]string{"reason", "fraudulent"}},
		{ProviderGeneric, "samples/generic.json", nil, "generic.firing", 1,
			Alert{Title: "Nightly backup failed", Severity: "error", Status: "firing", GroupKey: "postgres-backup",
				Summary: "pg_dump exited with status 1: connection refused"}, [2]string{"team", "data"}},
		{ProviderGeneric, "generic/nested.json", nil, "uptime.down", 1,
			Alert{Title: "example.com is down", Severity: "critical", Fingerprint: "generic-chk_29384"}, [2]string{"region", "eu-west-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			ev, err := Parse(tt.provider, tt.header, readTestdata(t, tt.file))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if ev.Provider != tt.provider || ev.Type != tt.typ || len(ev.Alerts) != tt.n {
				t.Fatalf("got provider %q type %q %d alerts, want %q %q %d", ev.Provider, ev.Type, len(ev.Alerts), tt.provider, tt.typ, tt.n)
			}
			a := ev.Alerts[0]
			checkSensible(t, a)
			for _, f := range []struct{ name, got, want string }{
				{"title", a.Title, tt.want.Title}, {"severity", a.Severity, tt.want.Severity},
				{"status", a.Status, tt.want.Status}, {"fingerprint", a.Fingerprint, tt.want.Fingerprint},
				{"group_key", a.GroupKey, tt.want.GroupKey}, {"summary", a.Summary, tt.want.Summary},
			} {
				if f.want != "" && f.got != f.want {
					t.Errorf("%s: got %q, want %q", f.name, f.got, f.want)
				}
			}
			if tt.label[0] != "" && a.Labels[tt.label[0]] != tt.label[1] {
				t.Errorf("label %s: got %q, want %q (labels %v)", tt.label[0], a.Labels[tt.label[0]], tt.label[1], a.Labels)
			}
		})
	}
}

// checkSensible holds for every alert of every provider.
func checkSensible(t *testing.T, a Alert) {
	t.Helper()
	if a.Title == "" || a.Fingerprint == "" || a.Source == "" || a.Labels == nil || a.Links == nil {
		t.Errorf("alert lacks title, fingerprint, source, labels or links: %+v", a)
	}
	if !slices.Contains([]string{SeverityCritical, SeverityError, SeverityWarning, SeverityInfo}, a.Severity) {
		t.Errorf("severity %q is not normalized", a.Severity)
	}
	if a.Status != StatusFiring && a.Status != StatusResolved {
		t.Errorf("status %q is not normalized", a.Status)
	}
}

func TestParseAlertmanagerRealDeliveries(t *testing.T) {
	f, err := os.Open(testdataPath("alertmanager/deliveries-0.25.0.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var types []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var d struct {
			Body json.RawMessage `json:"body"`
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		ev, err := Parse(ProviderAlertmanager, nil, d.Body)
		if err != nil {
			t.Fatal(err)
		}
		a := ev.Alerts[0]
		checkSensible(t, a)
		if want := time.Date(2026, 11, 22, 10, 35, 46, 0, time.UTC); !a.StartsAt.Equal(want) {
			t.Errorf("starts_at: got %v, want %v", a.StartsAt, want)
		}
		types = append(types, ev.Type+"/"+a.Status+"/"+a.Fingerprint)
	}
	want := []string{"alertmanager.firing/firing/6ed9d525cf4d2d47", "alertmanager.resolved/resolved/6ed9d525cf4d2d47"}
	if !slices.Equal(types, want) {
		t.Errorf("got %v, want %v", types, want)
	}
}

func TestParseMultiAlertKeepsEachStatus(t *testing.T) {
	ev, err := Parse(ProviderAlertmanager, nil, readTestdata(t, "alertmanager/multi-firing.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range ev.Alerts {
		got = append(got, a.Status+":"+a.Severity)
		if a.GroupKey != ev.Alerts[0].GroupKey {
			t.Errorf("alerts of one group must share the group key")
		}
	}
	// The third alert has no severity label: Alertmanager's default is warning.
	if want := []string{"firing:critical", "firing:critical", "resolved:warning"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if l := ev.Alerts[0].Links; len(l) != 2 || l[1] != "https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping" {
		t.Errorf("links: got %v", l)
	}
}

func TestParseEveryGitLabPayload(t *testing.T) {
	files, _ := filepath.Glob(testdataPath("gitlab/*.json"))
	if len(files) < 20 {
		t.Fatalf("got %d GitLab payloads, want the client-go set", len(files))
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := Parse(ProviderGitLab, nil, body)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if ev.Type == "" || ev.Type == "unknown" || len(ev.Alerts) != 1 {
			t.Errorf("%s: type %q, %d alerts", f, ev.Type, len(ev.Alerts))
			continue
		}
		checkSensible(t, ev.Alerts[0])
	}
}

func TestParseRejectsNonJSON(t *testing.T) {
	for _, p := range Providers() {
		for _, body := range []string{"", "not json", "[1,2]", `{"alerts": "nope"`, "<xml/>", "null"} {
			_, err := Parse(p, nil, []byte(body))
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeInvalidPayload || e.HTTPStatus() != http.StatusUnprocessableEntity {
				t.Errorf("%s %q: got %v, want invalid_payload", p, body, err)
			}
		}
	}
}

func TestParseRejectsWrongShape(t *testing.T) {
	cases := map[Provider]string{
		ProviderAlertmanager: `{"alerts": "nope"}`,
		ProviderPagerDuty:    `{"messages": []}`,
		ProviderStripe:       `{"object": "list", "data": []}`,
		ProviderSentry:       `{"hello": "world"}`,
		ProviderDatadog:      `{"foo": 1}`,
		ProviderGrafana:      `{"foo": 1}`,
	}
	for p, body := range cases {
		if _, err := Parse(p, nil, []byte(body)); !errors.Is(err, ErrInvalidPayload) {
			t.Errorf("%s %s: got %v, want invalid_payload", p, body, err)
		}
	}
	if _, err := Parse("nagios", nil, []byte(`{}`)); !errors.Is(err, ErrUnsupported) {
		t.Errorf("unknown provider: got %v, want unsupported", err)
	}
}

func TestSamplesCoverEveryProvider(t *testing.T) {
	for _, p := range Providers() {
		body := Sample(p)
		if len(body) == 0 {
			t.Errorf("no sample for %s", p)
			continue
		}
		ev, err := Parse(p, SampleHeaders(p), body)
		if err != nil {
			t.Errorf("%s sample: %v", p, err)
			continue
		}
		if len(ev.Alerts) == 0 || ev.Type == "unknown" {
			t.Errorf("%s sample: type %q, %d alerts", p, ev.Type, len(ev.Alerts))
		}
	}
	if Sample("nagios") != nil || Sample("../samples/generic") != nil {
		t.Error("Sample must return nil for unknown providers")
	}
}

func TestParseBoundsHeaderDerivedType(t *testing.T) {
	long := strings.Repeat("workflow_run", 100)
	ev, err := Parse(ProviderGitHub, hdr("X-GitHub-Event", long), readTestdata(t, "samples/github.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Type) > maxTypeLength || !strings.HasPrefix(ev.Type, "workflow_run") {
		t.Errorf("type: got %d bytes %.30q", len(ev.Type), ev.Type)
	}
}
