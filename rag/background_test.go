package rag

import (
	"context"
	"errors"
	"testing"
	"time"
)

// While another handle holds the index (its lock), a background open stays
// loading: calls wait LoadWait and fail with ErrLoading, Health says so,
// Stats counts nothing. Once the index is free the load completes and the
// documents written before are found.
func TestOpenInBackgroundLoadingThenReady(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	scope := Scope{OrgID: "0190c1a2-0000-7000-8000-000000000001", ProjectID: "0190c1a2-0000-7000-8000-000000000002"}
	first, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Put(ctx, scope, CollectionRunbooks, "disk.md", []byte("# Disk full\nClean /var/log first."), nil); err != nil {
		t.Fatal(err)
	}
	s, err := OpenInBackground(ctx, dir, Options{LoadWait: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Health(); !errors.Is(err, ErrLoading) {
		t.Fatalf("Health while loading: %v", err)
	}
	if _, err := s.Search(ctx, scope, Query{Text: "disk"}); !errors.Is(err, ErrLoading) {
		t.Fatalf("Search while loading: %v", err)
	}
	if _, err := s.Get(ctx, scope, CollectionRunbooks, "disk.md"); !errors.Is(err, ErrLoading) {
		t.Fatalf("Get while loading: %v", err)
	}
	if st := s.Stats(Scope{}); st.Documents != 0 {
		t.Fatalf("Stats while loading: %+v", st)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for s.Health() != nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Health(); err != nil {
		t.Fatalf("Health after the load: %v", err)
	}
	hits, err := s.Search(ctx, scope, Query{Text: "disk"})
	if err != nil || len(hits) == 0 {
		t.Fatalf("Search after the load: %v %v", hits, err)
	}
}
