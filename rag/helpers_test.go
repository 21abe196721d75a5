package rag

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func openStore(t *testing.T, dir string, opts Options) *Store {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	s, err := Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

func mustPut(t *testing.T, s *Store, scope Scope, collection, name, content string, tags []string) Doc {
	t.Helper()
	d, err := s.Put(context.Background(), scope, collection, name, []byte(content), tags)
	if err != nil {
		t.Fatalf("Put %s: %v", name, err)
	}
	return d
}

func search(t *testing.T, s *Store, scope Scope, q Query) []Hit {
	t.Helper()
	hits, err := s.Search(context.Background(), scope, q)
	if err != nil {
		t.Fatalf("Search %q: %v", q.Text, err)
	}
	return hits
}

// hitNames lists "collection/name" of hits, sorted, without duplicates.
func hitNames(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Collection+"/"+h.Name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// writeByHand writes a file the way an operator would, with a modification time that differs from any
// earlier version even on coarse-grained file systems.
func writeByHand(t *testing.T, path, content string, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func mustSync(t *testing.T, s *Store) {
	t.Helper()
	if err := s.Sync(context.Background()); err != nil {
		t.Fatalf("Sync: %v", err)
	}
}
