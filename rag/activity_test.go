package rag

import (
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestActivityOverTrailingWindow(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	s := openStore(t, t.TempDir(), Options{Now: clock.now})
	scope := Scope{OrgID: "o", ProjectID: "p"}
	mustPut(t, s, scope, CollectionRunbooks, "dns.md", "# DNS\nFlush the resolver cache.", nil)

	search(t, s, scope, Query{Text: "old query nobody answers"})
	clock.t = clock.t.Add(23 * time.Hour)
	for range 3 {
		search(t, s, scope, Query{Text: "resolver cache"})
	}
	search(t, s, scope, Query{Text: "vault unseal"})
	search(t, s, scope, Query{Text: "vault unseal"})
	search(t, s, Scope{OrgID: "o", ProjectID: "other"}, Query{Text: "other project"})
	clock.t = clock.t.Add(2 * time.Hour) // the first search is now 25 h old

	a := s.Activity(scope, time.Time{})
	if a.Searches != 5 || a.ZeroResults != 2 {
		t.Fatalf("got %d searches %d zero, want 5 and 2", a.Searches, a.ZeroResults)
	}
	if len(a.ZeroResultQueries) != 1 || a.ZeroResultQueries[0].Text != "vault unseal" || a.ZeroResultQueries[0].Count != 2 {
		t.Fatalf("zero-result queries: %+v", a.ZeroResultQueries)
	}
	if a.P50 <= 0 || a.P50 > a.P95 || a.P95 > a.P99 {
		t.Fatalf("percentiles out of order: %v %v %v", a.P50, a.P95, a.P99)
	}
	if want := clock.t.Add(-ActivityWindow); !a.Since.Equal(want) {
		t.Fatalf("since: got %v, want clamped to %v", a.Since, want)
	}
	if got := s.Activity(Scope{OrgID: "o"}, time.Time{}).Searches; got != 6 {
		t.Fatalf("org-wide: got %d searches, want 6", got)
	}
	if got := s.Activity(Scope{}, clock.t.Add(-time.Minute)).Searches; got != 0 {
		t.Fatalf("last minute: got %d searches, want 0", got)
	}
}

func TestPercentileNearestRank(t *testing.T) {
	var v []time.Duration
	for i := 1; i <= 100; i++ {
		v = append(v, time.Duration(i))
	}
	for p, want := range map[int]time.Duration{50: 50, 95: 95, 99: 99, 100: 100} {
		if got := percentile(v, p); got != want {
			t.Errorf("p%d: got %d, want %d", p, got, want)
		}
	}
	if got := percentile(v[:1], 99); got != 1 {
		t.Errorf("one value: got %d", got)
	}
}
