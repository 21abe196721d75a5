package rag

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
)

// chunksOf counts the chunks the bleve index itself holds of an organization
// (not the manifest's view of them).
func chunksOf(t *testing.T, s *Store, org string) uint64 {
	t.Helper()
	res, err := s.index.Search(bleve.NewSearchRequestOptions(term(fOrg, org), 0, 0, false))
	if err != nil {
		t.Fatal(err)
	}
	return res.Total
}

// DropOrg removes the organization's folder (every project's documents and
// the org-wide ones) and its chunks, leaves the others, and nothing comes back
// when the store reopens and re-reads its files.
func TestDropOrgRemovesFilesAndChunks(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	ctx := context.Background()
	a, aOrg, b := Scope{OrgID: "orga", ProjectID: "p1"}, Scope{OrgID: "orga"}, Scope{OrgID: "orgb", ProjectID: "p1"}
	mustPut(t, s, a, "runbooks", "one.md", "# One\n\nThe okapi restarts.\n", nil)
	mustPut(t, s, aOrg, "memories", "m.md", "# M\n\nokapi port 9\n", nil)
	mustPut(t, s, b, "runbooks", "two.md", "# Two\n\nThe okapi of b.\n", nil)
	if got, _ := s.Orgs(ctx); !slices.Equal(sorted(got), []string{"orga", "orgb"}) {
		t.Fatalf("Orgs: %v", got)
	}
	if chunksOf(t, s, "orga") == 0 {
		t.Fatal("no chunk of orga before the drop")
	}
	search(t, s, a, Query{Text: "wombat"}) // a zero-result search: its text is remembered
	if act := s.Activity(Scope{OrgID: "orga"}, time.Time{}); act.ZeroResults != 1 {
		t.Fatalf("activity before: %+v", act)
	}
	if err := s.DropOrg(ctx, "orga"); err != nil {
		t.Fatal(err)
	}
	if act := s.Activity(Scope{OrgID: "orga"}, time.Time{}); act.Searches != 0 {
		t.Fatalf("the erased org's searches are remembered: %+v", act)
	}
	check := func(s *Store, when string) {
		t.Helper()
		if _, err := os.Stat(filepath.Join(dir, "docs", "orga")); !os.IsNotExist(err) {
			t.Fatalf("%s: the folder stays (%v)", when, err)
		}
		if n := chunksOf(t, s, "orga"); n != 0 {
			t.Fatalf("%s: the index holds %d chunks of orga", when, n)
		}
		if st := s.Stats(Scope{OrgID: "orga"}); st.Documents != 0 || st.Chunks != 0 {
			t.Fatalf("%s: stats of orga %+v", when, st)
		}
		if got := hitNames(search(t, s, b, Query{Text: "okapi"})); !slices.Equal(got, []string{"runbooks/two.md"}) {
			t.Fatalf("%s: orgb finds %v", when, got)
		}
		if got, _ := s.Orgs(ctx); !slices.Equal(got, []string{"orgb"}) {
			t.Fatalf("%s: Orgs: %v", when, got)
		}
	}
	check(s, "after the drop")
	// Again: nothing to remove, no error.
	if err := s.DropOrg(ctx, "orga"); err != nil {
		t.Fatal(err)
	}
	if err := s.DropOrg(ctx, "../orgb"); err == nil {
		t.Fatal("an org id that is a path was accepted")
	}
	s.Close()
	check(openStore(t, dir, Options{}), "after reopening")
}

func sorted(s []string) []string { slices.Sort(s); return s }
