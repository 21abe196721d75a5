package rag

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

var recoveryScope = Scope{OrgID: "o", ProjectID: "p"}

func seed(t *testing.T, s *Store) {
	t.Helper()
	mustPut(t, s, recoveryScope, CollectionRunbooks, "kafka.md", "# Kafka\n## Lag\nScale the consumer group when lag grows.", []string{"kafka"})
	mustPut(t, s, recoveryScope, CollectionFacts, "regions.txt", "Production runs in eu-west-1 and us-east-2.", nil)
	mustPut(t, s, Scope{OrgID: "o"}, CollectionMemories, "prefs.md", "The team prefers Terraform over clicking in consoles.", nil)
}

func checkSeeded(t *testing.T, s *Store) {
	t.Helper()
	for q, want := range map[string]string{
		"consumer lag": "runbooks/kafka.md",
		"eu-west-1":    "facts/regions.txt",
		"terraform":    "memories/prefs.md",
	} {
		if got := hitNames(search(t, s, recoveryScope, Query{Text: q})); !slices.Equal(got, []string{want}) {
			t.Errorf("%q: got %v, want [%s]", q, got, want)
		}
	}
	if st := s.Stats(Scope{}); st.Documents != 3 || st.Chunks != 3 {
		t.Errorf("stats: got %d documents %d chunks, want 3 and 3", st.Documents, st.Chunks)
	}
}

func TestIndexDeletedIsRebuiltFromFiles(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	seed(t, s)
	s.Close()
	if err := os.RemoveAll(filepath.Join(dir, "index")); err != nil {
		t.Fatal(err)
	}
	checkSeeded(t, openStore(t, dir, Options{}))
}

func TestCorruptIndexIsRebuiltFromFiles(t *testing.T) {
	for name, damage := range map[string]func(p string, b []byte) []byte{
		// Every file replaced: bleve refuses to open the index.
		"all files": func(string, []byte) []byte { return []byte("this is not an index") },
		// Segments flipped but metadata intact: bleve opens it and panics reading a segment.
		"segments": func(p string, b []byte) []byte {
			if filepath.Ext(p) != ".zap" {
				return b
			}
			for i := 0; i < len(b); i += 7 {
				b[i] ^= 0x5a
			}
			return b
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir, Options{})
			seed(t, s)
			s.Close()
			n := 0
			filepath.WalkDir(filepath.Join(dir, "index"), func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() {
					return nil
				}
				b, rerr := os.ReadFile(p)
				if rerr != nil {
					t.Fatal(rerr)
				}
				orig := string(b)
				nb := damage(p, b)
				if string(nb) != orig {
					n++
				}
				if werr := os.WriteFile(p, nb, 0o600); werr != nil {
					t.Fatal(werr)
				}
				return nil
			})
			if n == 0 {
				t.Fatal("no index file damaged")
			}
			checkSeeded(t, openStore(t, dir, Options{}))
		})
	}
}

// A crash can lose the index's last batches (bleve persists in the background) but never an acknowledged
// Put: its file was fsynced, and the manifest that travels with the chunks tells Open it is missing.
func TestPutSurvivesLostIndexBatches(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	mustPut(t, s, recoveryScope, CollectionRunbooks, "kafka.md", "# Kafka\nold text about partitions", nil)
	s.Close()
	before := filepath.Join(t.TempDir(), "index")
	if err := os.CopyFS(before, os.DirFS(filepath.Join(dir, "index"))); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir, Options{})
	seed(t, s)
	s.Close()
	// Put the index back as it was before those Puts.
	if err := os.RemoveAll(filepath.Join(dir, "index")); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "index"), os.DirFS(before)); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir, Options{})
	checkSeeded(t, s)
	if hits := search(t, s, recoveryScope, Query{Text: "partitions"}); len(hits) != 0 {
		t.Fatalf("replaced text still found: %v", hitNames(hits))
	}
}

func TestChangedChunkingRebuildsIndex(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	seed(t, s)
	s.Close()
	checkSeeded(t, openStore(t, dir, Options{ChunkBytes: 800, ChunkOverlap: 100}))
}

// A second process on the same data directory gets an error; it must not take the locked index for a
// damaged one and delete it.
func TestLockedIndexIsNotRebuilt(t *testing.T) {
	dir := t.TempDir()
	first := openStore(t, dir, Options{})
	seed(t, first)
	if _, err := Open(context.Background(), dir, Options{lockTimeout: 100 * time.Millisecond}); err == nil {
		t.Fatal("second Open of a locked index succeeded")
	}
	checkSeeded(t, first)
}

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
