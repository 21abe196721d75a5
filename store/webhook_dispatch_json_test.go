package store

import (
	"encoding/json"
	"testing"
)

// The writer's JSON appenders write exactly what encoding/json does.
func TestDispatchJSONMatchesEncodingJSON(t *testing.T) {
	strs := []string{"", "plain", `quote " and \ back`, "<html> & co", "tab\tnewline\n\x01", "héllo ✓", "line\u2028sep",
		"bad \xff utf8"}
	for _, s := range strs {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
	lists := [][]DispatchItem{nil, {}, {{Kind: "incident", ID: "i1", Status: "triggered"}},
		{{Kind: "run", ID: "r", TaskID: "t", RuleID: "ru", Status: "skipped", Reason: `the previous run "x" <busy>`},
			{Kind: "window", ID: "w", Status: "observe", Reason: "maintenance window \"n\" (until 2026)"}}}
	for _, l := range lists {
		want, _ := json.Marshal(l)
		if got := appendDispatchItems(nil, l); string(got) != string(want) {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}
