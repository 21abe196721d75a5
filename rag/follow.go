package rag

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultFollowInterval is how often a server with a Source reads the changes other servers made.
const DefaultFollowInterval = 500 * time.Millisecond

// feedPage is how many changes one read of the feed returns.
const feedPage = 500

// rebuild brings a freshly opened index up to date with the Source: it reads the whole feed (tombstones
// included) and applies it, which re-indexes only the documents whose content the index does not hold,
// then removes whatever the index holds that the Source never had (an index left by an appliance, or by
// another database). The follower continues from the last change read.
func (s *Store) rebuild(ctx context.Context) error {
	s.followMu.Lock()
	defer s.followMu.Unlock()
	return s.rebuildLocked(ctx)
}

// rebuildLocked is rebuild; the caller holds followMu. The follower also calls it when the feed was pruned
// past its position (it may have missed deletions), while this server keeps writing.
func (s *Store) rebuildLocked(ctx context.Context) error {
	seen := map[string]bool{}
	var cursor int64
	for {
		page, err := s.src.Changes(ctx, cursor, feedPage)
		if err != nil {
			return fmt.Errorf("rag: read the document feed: %w", err)
		}
		for i := range page {
			// A Pruned change (its Seq is the highest deletion pruned) needs nothing more here: this read
			// removes whatever it does not find, and the follower continues past it.
			if !page[i].Erased && !page[i].Pruned {
				seen[page[i].path()] = true
			}
		}
		if len(page) > 0 {
			if err := s.apply(page); err != nil {
				return err
			}
			cursor = page[len(page)-1].Seq
		}
		if len(page) < feedPage {
			break
		}
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	b := s.newBatch()
	s.mmu.RLock()
	var gone []string
	for p := range s.manifest {
		// A document this server wrote after the read above has a higher change number: kept.
		if !seen[p] && s.seqs[p] <= cursor {
			gone = append(gone, p)
		}
	}
	s.mmu.RUnlock()
	for _, p := range gone {
		b.remove(p)
	}
	if err := b.commit(); err != nil {
		return err
	}
	s.cursor = cursor
	return nil
}

// follow applies the changes made since the last one applied (by any server); one at a time. When the feed
// was pruned past this server's position (it had stopped following for longer than the retention), the
// tombstones it had not read are gone: it rebuilds from the documents instead.
func (s *Store) follow(ctx context.Context) error {
	s.followMu.Lock()
	defer s.followMu.Unlock()
	for {
		page, err := s.src.Changes(ctx, s.cursor, feedPage)
		if err != nil {
			return fmt.Errorf("rag: read the document feed: %w", err)
		}
		for i := range page {
			if page[i].Pruned {
				s.log.Warn("rag: the document feed was pruned past this server's position; rebuilding the index from the documents",
					"position", s.cursor, "pruned_through", page[i].Seq)
				return s.rebuildLocked(ctx)
			}
		}
		if len(page) == 0 {
			return nil
		}
		if err := s.apply(page); err != nil {
			return err
		}
		s.cursor = page[len(page)-1].Seq
		if len(page) < feedPage {
			return nil
		}
	}
}

// apply brings the index up to date with changes (in any order): a change older than the one the index
// holds for its document is skipped, so the follower never brings back what this server has just written
// or deleted; a document whose content the index already holds is not re-indexed. An erased organization
// loses every document the index holds of it.
func (s *Store) apply(changes []SourceDoc) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	erased := map[string]int64{} // org -> the change number of its erasure
	for i := range changes {
		if d := &changes[i]; d.Erased {
			erased[d.Scope.OrgID] = max(erased[d.Scope.OrgID], d.Seq)
		}
	}
	latest := map[string]*SourceDoc{}
	var order []string
	s.mmu.RLock()
	for i := range changes {
		d := &changes[i]
		if d.Erased || d.Pruned {
			continue
		}
		p := d.path()
		if d.Seq <= s.seqs[p] || d.Seq < erased[d.Scope.OrgID] {
			continue
		}
		if prev, ok := latest[p]; ok {
			if prev.Seq < d.Seq {
				latest[p] = d
			}
			continue
		}
		latest[p] = d
		order = append(order, p)
	}
	var dropped []string // documents of erased organizations
	if len(erased) > 0 {
		for p := range s.manifest {
			if es, _, _, ok := location(p); ok && erased[es.OrgID] > s.seqs[p] {
				dropped = append(dropped, p)
			}
		}
	}
	s.mmu.RUnlock()
	b := s.newBatch()
	for _, p := range dropped {
		b.remove(p)
	}
	for _, p := range order {
		d := latest[p]
		if d.Deleted {
			b.remove(p)
			continue
		}
		// The hash of the content itself, not the one the Source recorded: what decides is what the
		// index would hold.
		if old, ok := b.previous(p); ok && old.Hash == hashHex(d.Content) {
			continue
		}
		if err := b.add(entry{Path: p, Size: d.Size, ModTime: d.ModTime.UnixNano()}, d.Content); err != nil {
			return err
		}
	}
	if err := b.commit(); err != nil {
		return err
	}
	s.mmu.Lock()
	for _, p := range order {
		s.seqs[p] = latest[p].Seq
	}
	if len(erased) > 0 {
		// The organization will write nothing more: what was kept of its documents is dropped too.
		for p := range s.seqs {
			if es, _, _, ok := location(p); ok && erased[es.OrgID] > s.seqs[p] {
				delete(s.seqs, p)
			}
		}
	}
	s.mmu.Unlock()
	return nil
}

// Refresh re-reads one document from the Source and makes the index match it, whatever change the index
// last applied for it. A caller whose transaction failed after a Put or Delete joined it calls this: the
// index took that change at once, and the Source never committed it. Without a Source it does nothing.
func (s *Store) Refresh(ctx context.Context, scope Scope, collection, name string) error {
	if s.src == nil {
		return nil
	}
	if err := s.await(ctx); err != nil {
		return err
	}
	d, err := s.src.Get(ctx, scope, collection, name)
	switch {
	case errors.Is(err, ErrNotFound):
		d = &SourceDoc{Scope: scope, Collection: collection, Name: name, Deleted: true}
	case err != nil:
		return err
	}
	p := d.path()
	s.mmu.Lock()
	delete(s.seqs, p)
	s.mmu.Unlock()
	s.wmu.Lock()
	if !d.Deleted {
		// Re-index even when the hash matches what the failed write left.
		b := s.newBatch()
		b.remove(p)
		if err := b.commit(); err != nil {
			s.wmu.Unlock()
			return err
		}
	}
	s.wmu.Unlock()
	if d.Seq == 0 {
		d.Seq = 1 // a tombstone made up here: applied once, then any real change wins
	}
	if err := s.apply([]SourceDoc{*d}); err != nil {
		return err
	}
	if d.Deleted {
		s.mmu.Lock()
		delete(s.seqs, p)
		s.mmu.Unlock()
	}
	return nil
}

// followLoop runs follow every interval until ctx ends.
func (s *Store) followLoop(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if s.loaded() != nil {
				continue // still rebuilding in the background (OpenInBackground), or that failed
			}
			err := s.follow(ctx)
			switch {
			case err != nil && ctx.Err() == nil && !errors.Is(err, ErrClosed) && !failing:
				s.log.Error("rag: following the document feed failed", "err", err.Error())
				failing = true
			case err == nil && failing:
				s.log.Info("rag: following the document feed again")
				failing = false
			}
		}
	}
}
