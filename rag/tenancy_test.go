package rag

import (
	"slices"
	"testing"
	"time"
)

// Every document says the same words, so only the tenancy filters decide what a search returns.
func TestSearchNeverCrossesTenants(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{})
	const text = "# Postgres failover\nPromote the standby with pg_ctl promote."
	docs := []struct {
		scope Scope
		name  string
	}{
		{Scope{"orgA", "p1"}, "a-p1.md"},
		{Scope{"orgA", "p2"}, "a-p2.md"},
		{Scope{"orgA", ""}, "a-org.md"},
		{Scope{"orgB", "p1"}, "b-p1.md"}, // same project id, other organization
		{Scope{"orgB", ""}, "b-org.md"},
	}
	for _, d := range docs {
		mustPut(t, s, d.scope, CollectionRunbooks, d.name, text, []string{"db"})
	}
	cases := []struct {
		scope Scope
		want  []string
	}{
		{Scope{"orgA", "p1"}, []string{"runbooks/a-org.md", "runbooks/a-p1.md"}},
		{Scope{"orgA", "p2"}, []string{"runbooks/a-org.md", "runbooks/a-p2.md"}},
		{Scope{"orgA", ""}, []string{"runbooks/a-org.md"}},
		{Scope{"orgB", "p1"}, []string{"runbooks/b-org.md", "runbooks/b-p1.md"}},
		{Scope{"orgC", "p1"}, nil},
	}
	for _, c := range cases {
		hits := search(t, s, c.scope, Query{Text: "standby promote", Limit: MaxLimit})
		if got := hitNames(hits); !slices.Equal(got, c.want) {
			t.Errorf("scope %+v: got %v, want %v", c.scope, got, c.want)
		}
		for _, h := range hits {
			if h.OrgWide != (h.Name == "a-org.md" || h.Name == "b-org.md") {
				t.Errorf("scope %+v: %s OrgWide=%v", c.scope, h.Name, h.OrgWide)
			}
		}
	}
	// A tags-only search (match-all scoring) is filtered the same way.
	if got := hitNames(search(t, s, Scope{"orgB", "p1"}, Query{Tags: []string{"db"}})); !slices.Equal(got, []string{"runbooks/b-org.md", "runbooks/b-p1.md"}) {
		t.Errorf("orgB: got %v", got)
	}

	if st := s.Stats(Scope{"orgA", "p1"}); st.Documents != 2 || st.OrgWideDocuments != 1 || st.ByCollection[CollectionRunbooks] != 2 {
		t.Errorf("project stats: %+v", st)
	}
	if st := s.Stats(Scope{OrgID: "orgA"}); st.Documents != 3 {
		t.Errorf("org stats: got %d documents, want 3", st.Documents)
	}
	if st := s.Stats(Scope{}); st.Documents != 5 || st.IndexBytes <= 0 || st.LastIndexed.IsZero() || st.Chunks != 5 {
		t.Errorf("global stats: %+v", st)
	}

	// Another tenant's zero-result query texts stay with that tenant.
	search(t, s, Scope{"orgB", "p1"}, Query{Text: "orgB secret plan"})
	if a := s.Activity(Scope{OrgID: "orgA"}, time.Time{}); len(a.ZeroResultQueries) != 0 {
		t.Errorf("orgA sees orgB's zero-result queries: %+v", a.ZeroResultQueries)
	}
	if a := s.Activity(Scope{"orgB", "p1"}, time.Time{}); len(a.ZeroResultQueries) != 1 || a.ZeroResultQueries[0].Text != "orgB secret plan" {
		t.Errorf("orgB activity: %+v", a)
	}
}
