package rag

import (
	"testing"
	"time"
)

// A clean Close keeps the index: reopening re-indexes nothing. (bleve's unsafe_batch mode would break this:
// it drops batches not yet persisted at Close.)
func TestReopenAfterCloseReindexesNothing(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	s := openStore(t, dir, Options{Now: clock.now})
	seed(t, s)
	s.Close()
	clock.t = clock.t.Add(time.Hour)
	s = openStore(t, dir, Options{Now: clock.now})
	checkSeeded(t, s)
	if got, want := s.Stats(Scope{}).LastIndexed, clock.t.Add(-time.Hour); !got.Equal(want) {
		t.Fatalf("last indexed %v, want %v: documents were indexed again", got, want)
	}
}
