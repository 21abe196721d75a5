package webhook

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func sampleEnv(t *testing.T, p Provider, file string, h map[string]string) Env {
	t.Helper()
	body := readTestdata(t, file)
	hh := SampleHeaders(p)
	for k, v := range h {
		hh.Set(k, v)
	}
	ev, err := Parse(p, hh, body)
	if err != nil {
		t.Fatal(err)
	}
	return NewEnv(ev, body, hh)
}

func TestConditionMatch(t *testing.T) {
	am := sampleEnv(t, ProviderAlertmanager, "alertmanager/multi-firing.json", map[string]string{"Authorization": "Bearer secret-token"})
	pd := sampleEnv(t, ProviderPagerDuty, "samples/pagerduty.json", nil)
	gh := sampleEnv(t, ProviderGitHub, "samples/github.json", nil)
	tests := []struct {
		src  string
		env  Env
		want bool
	}{
		{`alert.severity == "critical"`, am, true},
		{`alert.severity == "warning"`, am, false},
		{`alert.labels.namespace == "payments" && event == "alertmanager.firing"`, am, true},
		{`len(alerts) == 3 && any(alerts, .status == "resolved")`, am, true},
		{`all(alerts, .labels.container == "api")`, am, true},
		{`count(alerts, .severity == "critical") >= 2`, am, true},
		{`payload.groupLabels.alertname startsWith "KubePod"`, am, true},
		{`payload.truncatedAlerts > 0`, am, false},
		{`"authorization" in headers`, am, false},
		{`headers["user-agent"] contains "Alertmanager"`, am, true},
		{`provider == "alertmanager"`, am, true},
		{`event == "incident.triggered" && payload.event.data.urgency == "high"`, pd, true},
		{`alert.labels.priority in ["P1", "P2"]`, pd, true},
		{`payload.event.data.number == 2`, pd, true},
		{`payload.missing?.deeper == nil`, pd, true},
		{`headers["x-github-event"] == "workflow_run" && payload.workflow_run.conclusion == "failure"`, gh, true},
		{`alert.title matches "^example-corp/.*failure$"`, gh, true},
		{`lower(alert.labels.branch) == "main" and not (alert.status == "resolved")`, gh, true},
	}
	for _, tt := range tests {
		c, err := CompileCondition(tt.src)
		if err != nil {
			t.Errorf("%s: compile: %v", tt.src, err)
			continue
		}
		got, err := c.Match(tt.env)
		if err != nil || got != tt.want {
			t.Errorf("%s: got %v, %v; want %v", tt.src, got, err, tt.want)
		}
		if c.String() != tt.src {
			t.Errorf("String: got %q", c.String())
		}
	}
}

func TestCompileConditionRejects(t *testing.T) {
	tests := []struct{ src, msg string }{
		{"", "empty"},
		{"   ", "empty"},
		{`alert.severity ==`, "unexpected"},
		{`alert.sevrity == "critical"`, "sevrity"},
		{`nosuchvar == 1`, "nosuchvar"},
		{`alert.severity`, "bool"},
		{`len(alerts)`, "bool"},
		{`1..1000000 | all(# > 0)`, "ranges"},
		{`any(1..10, # == 3)`, "ranges"},
		{`let x = alert.title; x == ""`, "let"},
		{`any(alerts, any(alerts, .title == ""))`, "inside another predicate"},
		{`repeat(alert.title, 1000000) == ""`, "repeat"},
		{`reduce(alerts, #acc + #acc, "x") == ""`, "reduce"},
		{`toJSON(payload) contains "x"`, "toJSON"},
		{`replace(alert.title, "", alert.title) == ""`, "replace"},
		{strings.Repeat("a", MaxConditionLength+1), "longer than"},
		{strings.Repeat(`1 < 2 || `, 100) + "true", "nodes"},
	}
	for _, tt := range tests {
		_, err := CompileCondition(tt.src)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeInvalidCondition || e.HTTPStatus() != 422 {
			t.Errorf("%.60q: got %v, want invalid_condition", tt.src, err)
			continue
		}
		if !strings.Contains(e.Message, tt.msg) {
			t.Errorf("%.60q: message %q does not mention %q", tt.src, e.Message, tt.msg)
		}
	}
}

func TestConditionRuntimeErrorIsNoMatch(t *testing.T) {
	env := sampleEnv(t, ProviderGeneric, "samples/generic.json", nil)
	for _, src := range []string{
		`payload.labels.team.deeper == 1`, // string has no fields
		`payload.title > 3`,               // string compared with a number
		`payload.title + 1 == 2`,          // string plus number
	} {
		c, err := CompileCondition(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		got, err := c.Match(env)
		if got || !errors.Is(err, ErrConditionEval) {
			t.Errorf("%s: got %v, %v; want false with condition_eval", src, got, err)
		}
	}
}

func TestNewEnvBoundsAndHidesCredentials(t *testing.T) {
	body := []byte(`{"big":"` + strings.Repeat("é", 2000) + `","arr":[` + strings.Repeat("1,", 500) + `1]}`)
	ev, err := Parse(ProviderGeneric, nil, body)
	if err != nil {
		t.Fatal(err)
	}
	h := hdr("Authorization", "Bearer x", "X-Hub-Signature-256", "sha256=00", "Stripe-Signature", "t=1",
		"Cookie", "a=b", "X-Custom", "v")
	h.Add("X-Custom", "w")
	env := NewEnv(ev, body, h)
	p := env.Payload.(map[string]any)
	if s := p["big"].(string); len(s) > envMaxString || !strings.HasPrefix(s, "éé") || strings.ContainsRune(s, '\uFFFD') {
		t.Errorf("big string: %d bytes", len(s))
	}
	if n := len(p["arr"].([]any)); n != envMaxArray {
		t.Errorf("array: got %d elements, want %d", n, envMaxArray)
	}
	want := map[string]string{"x-custom": "v, w"}
	if len(env.Headers) != 1 || env.Headers["x-custom"] != want["x-custom"] {
		t.Errorf("headers: got %v, want %v", env.Headers, want)
	}
	empty := NewEnv(Event{Type: "x"}, []byte("not json"), nil)
	c, _ := CompileCondition(`alert.title == "" && payload == nil && len(alerts) == 0`)
	if ok, err := c.Match(empty); !ok || err != nil {
		t.Errorf("empty env: got %v, %v", ok, err)
	}
}

func TestSelectRules(t *testing.T) {
	env := sampleEnv(t, ProviderAlertmanager, "alertmanager/multi-firing.json", nil)
	must := func(src string) *Condition {
		c, err := CompileCondition(src)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	critical := must(`alert.severity == "critical"`)
	never := must(`alert.severity == "info"`)
	broken := must(`payload.receiver.nope == 1`)
	tests := []struct {
		name    string
		rules   []RuleSpec
		want    []int
		wantErr bool
	}{
		{"first match by priority", []RuleSpec{{Priority: 20, Condition: critical}, {Priority: 10, Condition: critical}, {Priority: 30}}, []int{1}, false},
		{"ties keep slice order", []RuleSpec{{Priority: 5, Condition: critical}, {Priority: 5, Condition: critical}}, []int{0}, false},
		{"fan out", []RuleSpec{{Priority: 3, Condition: critical, Continue: true}, {Priority: 1, Condition: never, Continue: true},
			{Priority: 2, Continue: true}}, []int{2, 0}, false},
		{"fan out stops at a first-match rule", []RuleSpec{{Priority: 1, Continue: true}, {Priority: 2}, {Priority: 3}}, []int{0, 1}, false},
		{"disabled skipped", []RuleSpec{{Priority: 1, Disabled: true}, {Priority: 2, Condition: critical}}, []int{1}, false},
		{"runtime error is no match", []RuleSpec{{Priority: 1, Condition: broken}, {Priority: 2, Condition: critical}}, []int{1}, true},
		{"nothing matches", []RuleSpec{{Condition: never}}, nil, false},
	}
	for _, tt := range tests {
		got, err := SelectRules(tt.rules, env)
		if !slices.Equal(got, tt.want) || (err != nil) != tt.wantErr {
			t.Errorf("%s: got %v, %v; want %v (error %v)", tt.name, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !errors.Is(err, ErrConditionEval) {
			t.Errorf("%s: error %v is not condition_eval", tt.name, err)
		}
	}
}
