package webhook

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// sameAsEncodingJSON checks the fast Alertmanager reader against
// encoding/json: whatever it accepts, encoding/json accepts with the same
// result (what it declines goes to encoding/json anyway).
func sameAsEncodingJSON(t *testing.T, body []byte) (fast bool) {
	t.Helper()
	var got, want amPayload
	wantErr := json.Unmarshal(body, &want)
	if !amFast(body, &got) {
		return false
	}
	if wantErr != nil {
		t.Fatalf("fast reader accepted what encoding/json refuses (%v): %q", wantErr, body)
	}
	want.GroupLabels = nil // checked but not kept by the fast reader
	want.pick()            // as decodeAM does after encoding/json
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fast reader differs on %q:\n got %#v\nwant %#v", body, got, want)
	}
	return true
}

// amBodies are the real Alertmanager and Grafana deliveries of testdata.
func amBodies(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	for _, name := range []string{"samples/alertmanager.json", "samples/grafana.json", "alertmanager/multi-firing.json"} {
		out = append(out, readTestdata(t, name))
	}
	f, err := os.Open(testdataPath("alertmanager/deliveries-0.25.0.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var d struct{ Body json.RawMessage }
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d.Body)
	}
	return out
}

func TestAMFastTakesRealDeliveries(t *testing.T) {
	for _, b := range amBodies(t) {
		if !sameAsEncodingJSON(t, bytes.TrimSpace(b)) {
			t.Errorf("a real delivery took the slow path: %.200s", b)
		}
	}
}

func TestAMFastEdgeCases(t *testing.T) {
	fast := []string{
		`{}`,
		` {"status":"firing"} `,
		`{"alerts":[]}`,
		`{"alerts":null,"groupLabels":null,"commonLabels":{}}`,
		`{"version":null,"status":null}`,
		`{"groupKey":"{}:{alertname=\"Disk\", x=\"\\u00e9\\/\"}","receiver":"caf\u00e9 \ud83d\ude00"}`,
		`{"title":"héllo wörld ✓","alerts":[{"labels":{"a":"1","a":"2"},"annotations":{"\u0061b":"c"}}]}`,
		`{"unknown":{"a":[1,-2.5e+3,0,true,false,null,"x\n",{"":{}}]},"alerts":[{"extra":[[[]]],"status":"resolved"}]}`,
		"{\"message\":\"bad \xff utf8 \xc3\",\"alerts\":[{\"labels\":{\"k\xfe\":\"v\xc0\"}}]}",
		`{"Unknown":1,"alertsX":3,"x":"ünïcode"}`,
		`{"status":"a\b\f\n\r\t\/\\\"z","title":"é\n\u00e9\ud83d\ude00\ud800x","message":"\"ok\""}`,
		"{\"status\":\"\\n\xff\"}",
	}
	for _, s := range fast {
		if !sameAsEncodingJSON(t, []byte(s)) {
			t.Errorf("took the slow path: %s", s)
		}
	}
	slow := []string{
		`{"Status":"firing"}`, // case-insensitive match: encoding/json's rule
		`{"status":"a","status":"b"}`,
		`{"version":4}`,
		`{"status":5}`,
		`{"alerts":[null]}`,
		`{"alerts":[{"labels":{"a":null}}]}`,
		`{"alerts":[{"labels":{"a":1}}]}`,
		`{"groupLabels":{"a":"b"},"groupLabels":{"c":"d"}}`,
		`{"x":01}`, `{"x":-}`, `{"x":1.}`, `{"x":1e}`, `{"x":tru}`, `{"x":"\x"}`, `{"x":"\u12"}`,
		"{\"x\":\"a\tb\"}", `{"x":1,}`, `{,}`, `{"x" 1}`, `{"x":1} x`, `{"x":[1,]}`, `{"x":"`,
		`{"x":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`,
		"{\"\u212aey\":1}", // the Kelvin sign folds to k
		`{"ünïcode":2}`,
	}
	for _, s := range slow {
		if sameAsEncodingJSON(t, []byte(s)) {
			t.Errorf("took the fast path: %s", s)
		}
	}
}

// Run the seeds with go test; explore with go test -fuzz=FuzzAMFast.
func FuzzAMFast(f *testing.F) {
	for _, b := range amBodies(f) {
		f.Add(b)
	}
	files, _ := filepath.Glob(testdataPath("samples/*.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"alerts":[{"labels":{"a":"\u00e9"}}],"x":[1,{"y":null}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		sameAsEncodingJSON(t, body)
	})
}

func TestParseIntAsStrconv(t *testing.T) {
	for _, s := range []string{"", "0", "12", "+12", "-12", "+", "-", "1_000", "0x10", "1e3", " 1", "2026-11-23T10:00:00Z",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "١٢", "00012"} {
		n, ok := parseInt(s)
		want, err := strconv.ParseInt(s, 10, 64)
		if ok != (err == nil) || ok && n != want {
			t.Errorf("%q: got %d %v, want %d %v", s, n, ok, want, err)
		}
	}
}

func TestIsCredentialHeaderAsToLower(t *testing.T) {
	names := []string{"", "Authorization", "AUTHORIZATION", "authorization", "X-Hub-Signature-256", "Content-Type",
		"X-Grafana-Alerting-Signature", "X-Grafana-Alerting-Signaturex", "Cookie", "Set-Cookie", "X-Api-\u212aey",
		"DD-API-KEY", strings.Repeat("x", 40), "Stripe-Signature"}
	for k := range credentialHeaders {
		names = append(names, k, strings.ToUpper(k))
	}
	for _, n := range names {
		if got, want := IsCredentialHeader(n), credentialHeaders[strings.ToLower(n)]; got != want {
			t.Errorf("%q: got %v, want %v", n, got, want)
		}
	}
}

// TestAMAlertsSameOnBothPaths: the alerts normalized from the fast
// reader's picks equal those from encoding/json's maps (moved by pick), on
// every real delivery and on annotations with repeated or extra keys.
func TestAMAlertsSameOnBothPaths(t *testing.T) {
	bodies := amBodies(t)
	bodies = append(bodies,
		[]byte(`{"status":"firing","commonLabels":{"severity":"critical","x":"y"},"commonAnnotations":{"summary":"common"},"alerts":[{"labels":{"alertname":"A"},"annotations":{"summary":"s1","summary":"s2","runbook_url":"http://r","dashboard_url":"http://d","runbook":"http://rb","other":"o"}}]}`),
		[]byte(`{"status":"resolved","commonAnnotations":{"summary":"common"},"alerts":[{"labels":{"alertname":"B"},"annotations":{"description":"d","message":"m"}},{"annotations":null}]}`))
	for _, b := range bodies {
		var fast, slow amPayload
		if !amFast(b, &fast) {
			t.Fatalf("slow path: %.200s", b)
		}
		if err := json.Unmarshal(b, &slow); err != nil {
			t.Fatal(err)
		}
		slow.pick()
		got, want := amAlerts(fast, "alertmanager"), amAlerts(slow, "alertmanager")
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%.200s:\n got %+v\nwant %+v", b, got, want)
		}
	}
}
