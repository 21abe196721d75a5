package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	body := `{"a":{"password":"p1","Token":"t1","keep":1},"password":"p0",` +
		`"alerts":[{"annotations":{"token":"x","summary":"s"}},{"annotations":{"token":"y"}}],` +
		`"list":[["deep",{"password":"p2"}]],"app.kubernetes.io/name":"api","html":"<b>&</b>","n":1.50}`
	tests := []struct {
		globs []string
		want  string
	}{
		{[]string{"**.password"},
			`{"a":{"password":"[REDACTED]","Token":"t1","keep":1},"password":"[REDACTED]",` +
				`"alerts":[{"annotations":{"token":"x","summary":"s"}},{"annotations":{"token":"y"}}],` +
				`"list":[["deep",{"password":"[REDACTED]"}]],"app.kubernetes.io/name":"api","html":"<b>&</b>","n":1.50}`},
		{[]string{"alerts.*.annotations.token"},
			`{"a":{"password":"p1","Token":"t1","keep":1},"password":"p0",` +
				`"alerts":[{"annotations":{"token":"[REDACTED]","summary":"s"}},{"annotations":{"token":"[REDACTED]"}}],` +
				`"list":[["deep",{"password":"p2"}]],"app.kubernetes.io/name":"api","html":"<b>&</b>","n":1.50}`},
		{[]string{"a", "alerts.1", `app\.kubernetes\.io/name`},
			`{"a":"[REDACTED]","password":"p0",` +
				`"alerts":[{"annotations":{"token":"x","summary":"s"}},"[REDACTED]"],` +
				`"list":[["deep",{"password":"p2"}]],"app.kubernetes.io/name":"[REDACTED]","html":"<b>&</b>","n":1.50}`},
		{[]string{"*.TOKEN", "list.0.0"}, // case-insensitive; index paths
			`{"a":{"password":"p1","Token":"[REDACTED]","keep":1},"password":"p0",` +
				`"alerts":[{"annotations":{"token":"x","summary":"s"}},{"annotations":{"token":"y"}}],` +
				`"list":[["[REDACTED]",{"password":"p2"}]],"app.kubernetes.io/name":"api","html":"<b>&</b>","n":1.50}`},
		{[]string{"**.*tok*"}, // in-segment wildcards at any depth
			`{"a":{"password":"p1","Token":"[REDACTED]","keep":1},"password":"p0",` +
				`"alerts":[{"annotations":{"token":"[REDACTED]","summary":"s"}},{"annotations":{"token":"[REDACTED]"}}],` +
				`"list":[["deep",{"password":"p2"}]],"app.kubernetes.io/name":"api","html":"<b>&</b>","n":1.50}`},
		{[]string{"alerts.**.token"},
			`{"a":{"password":"p1","Token":"t1","keep":1},"password":"p0",` +
				`"alerts":[{"annotations":{"token":"[REDACTED]","summary":"s"}},{"annotations":{"token":"[REDACTED]"}}],` +
				`"list":[["deep",{"password":"p2"}]],"app.kubernetes.io/name":"api","html":"<b>&</b>","n":1.50}`},
	}
	for _, tt := range tests {
		got, err := Redact([]byte(body), tt.globs)
		if err != nil {
			t.Fatalf("%v: %v", tt.globs, err)
		}
		if string(got) != tt.want {
			t.Errorf("%v:\n got %s\nwant %s", tt.globs, got, tt.want)
		}
		if !json.Valid(got) {
			t.Errorf("%v: output is not JSON", tt.globs)
		}
	}
}

func TestRedactNoMatchReturnsBodyUnchanged(t *testing.T) {
	body := []byte("{\n  \"a\": 1,\n  \"b\": [true, null]\n}\n")
	for _, globs := range [][]string{nil, {"c"}, {"**.secret"}, {"a.b"}} {
		got, err := Redact(body, globs)
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("%v: got %q, %v; want the body unchanged", globs, got, err)
		}
	}
}

func TestRedactSampleAlertmanagerAnnotationToken(t *testing.T) {
	body := readTestdata(t, "alertmanager/multi-firing.json")
	got, err := Redact(body, []string{"alerts.*.annotations.token"})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(got, []byte("s3cr3t-annotation-token")) || !bytes.Contains(got, []byte(`"token":"[REDACTED]"`)) {
		t.Errorf("token not redacted: %s", got)
	}
	// The redacted payload still parses into the same alerts.
	ev, err := Parse(ProviderAlertmanager, nil, got)
	if err != nil || len(ev.Alerts) != 3 || ev.Alerts[2].Status != StatusResolved {
		t.Errorf("redacted payload: %+v, %v", ev, err)
	}
}

func TestRedactRejects(t *testing.T) {
	for _, body := range []string{"", "{", `{"a":1} {"b":2}`, "nope", `{"a":}`, strings.Repeat("[", 600) + strings.Repeat("]", 600)} {
		if _, err := Redact([]byte(body), []string{"**.a"}); !errors.Is(err, ErrInvalidPayload) {
			t.Errorf("body %.20q: got %v, want invalid_payload", body, err)
		}
	}
	if _, err := Redact([]byte(`{}`), []string{"ok", "a..b"}); !errors.Is(err, ErrInvalidGlob) {
		t.Errorf("got %v, want invalid_glob", err)
	}
	many := make([]string, MaxGlobs+1)
	for i := range many {
		many[i] = "a"
	}
	if _, err := Redact([]byte(`{}`), many); !errors.Is(err, ErrInvalidGlob) {
		t.Errorf("too many globs: got %v, want invalid_glob", err)
	}
}

func TestValidateGlob(t *testing.T) {
	valid := []string{"a", "a.b", "*", "*.x", "**.password", "alerts.*.annotations.token", "a.**.b.**",
		`app\.kubernetes\.io/name`, `a\*b`, `a\\b`, "*tok*", "0.1", "héllo.wörld"}
	for _, g := range valid {
		if err := ValidateGlob(g); err != nil {
			t.Errorf("%q: got %v, want valid", g, err)
		}
	}
	invalid := []string{"", ".", "a.", ".a", "a..b", "**", "**.**", "a**", "**b.c", `a\`,
		strings.Repeat("a", MaxGlobLength+1), strings.Repeat("a.", MaxGlobSegments) + "a"}
	for _, g := range invalid {
		err := ValidateGlob(g)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeInvalidGlob || e.HTTPStatus() != 422 {
			t.Errorf("%.40q: got %v, want invalid_glob", g, err)
		}
	}
}

func TestRedactKeepsStringsFaithful(t *testing.T) {
	body := []byte(`{"s":"line\nnext \"q\" \\ \u0001 é \u2028 <>&","secret":1}`)
	got, err := Redact(body, []string{"secret"})
	if err != nil {
		t.Fatal(err)
	}
	var before, after map[string]any
	if err := json.Unmarshal(body, &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &after); err != nil {
		t.Fatalf("output %s: %v", got, err)
	}
	if before["s"] != after["s"] || after["secret"] != Redacted {
		t.Errorf("got %s", got)
	}
}
