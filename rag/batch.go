package rag

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/blevesearch/bleve/v2"
)

// batch collects the index changes of several files. The chunks of a file and its manifest entry always go
// into the same bleve batch, so after a crash the index either holds both or neither, and the manifest
// never claims chunks the index lost.
type batch struct {
	s       *Store
	b       *bleve.Batch
	entries []entry  // files (re-)indexed or touched, to record in memory after commit
	removed []string // files removed
	now     int64
}

// newBatch starts a batch; the caller holds s.wmu until commit.
func (s *Store) newBatch() *batch {
	return &batch{s: s, b: s.index.NewBatch(), now: s.opts.Now().UnixNano()}
}

func (b *batch) previous(p string) (entry, bool) {
	b.s.mmu.RLock()
	defer b.s.mmu.RUnlock()
	e, ok := b.s.manifest[p]
	return e, ok
}

// add indexes a file's content as e.Path. Front matter that does not parse and tags that are not valid are
// ignored (with a warning) rather than keeping a hand-edited file out of the index.
func (b *batch) add(e entry, content []byte) error {
	scope, collection, name, ok := location(e.Path)
	if !ok {
		return fmt.Errorf("rag: bad manifest path %q", e.Path)
	}
	block, body, _ := splitFrontMatter(content)
	m, err := parseMeta(block)
	if err != nil {
		b.s.log.Warn("rag: ignoring front matter", "path", e.Path, "err", err.Error())
	}
	tags := make([]string, 0, len(m.Tags))
	for _, t := range m.Tags {
		if norm, err := normalizeTags([]string{t}); err == nil {
			tags = append(tags, norm...)
		}
	}
	slices.Sort(tags)
	e.Tags = slices.Compact(tags)
	e.Hash = hashHex(content)
	var chunks []chunk
	e.Title, chunks = b.s.chunker.split(name, m.Title, string(body))
	e.Chunks = len(chunks)
	e.IndexedAt = b.now
	for i, c := range chunks {
		if err := b.b.Index(chunkID(e.Path, i), chunkFields(scope, collection, name, e.Title, e.Tags, c)); err != nil {
			return fmt.Errorf("rag: index %s: %w", e.Path, err)
		}
	}
	if old, ok := b.previous(e.Path); ok {
		for i := e.Chunks; i < old.Chunks; i++ {
			b.b.Delete(chunkID(e.Path, i))
		}
	}
	if err := b.b.Index(manifestID(e.Path), e.fields()); err != nil {
		return fmt.Errorf("rag: index %s: %w", e.Path, err)
	}
	b.entries = append(b.entries, e)
	return nil
}

// touch records a new size and time for a file whose content did not change (copied over, touched).
func (b *batch) touch(e entry) error {
	if err := b.b.Index(manifestID(e.Path), e.fields()); err != nil {
		return fmt.Errorf("rag: index %s: %w", e.Path, err)
	}
	b.entries = append(b.entries, e)
	return nil
}

// remove takes a file's chunks and manifest entry out of the index.
func (b *batch) remove(p string) {
	old, ok := b.previous(p)
	if !ok {
		return
	}
	for i := range old.Chunks {
		b.b.Delete(chunkID(p, i))
	}
	b.b.Delete(manifestID(p))
	b.removed = append(b.removed, p)
}

// commit applies the batch to the index, then to the in-memory manifest.
func (b *batch) commit() error {
	if b.b.Size() > 0 {
		if err := b.s.index.Batch(b.b); err != nil {
			return fmt.Errorf("rag: index batch: %w", err)
		}
	}
	s := b.s
	s.mmu.Lock()
	defer s.mmu.Unlock()
	for _, e := range b.entries {
		s.manifest[e.Path] = e
		delete(s.rejected, e.Path)
	}
	for _, p := range b.removed {
		delete(s.manifest, p)
	}
	if len(b.entries) > 0 || len(b.removed) > 0 {
		s.lastIndexed = time.Unix(0, b.now)
	}
	return nil
}

func hashHex(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}
