package rag

import (
	"io/fs"
	"path/filepath"
	"time"
)

// Stats is the live state of the index for a scope.
type Stats struct {
	// Documents and Chunks count what the scope's searches can find (for a project, the org-wide
	// documents included; OrgWideDocuments says how many of them).
	Documents        int
	OrgWideDocuments int
	Chunks           int
	// ByCollection counts documents per collection.
	ByCollection map[string]int
	// IndexBytes is the size on disk of the whole index, shared by all tenants.
	IndexBytes int64
	// LastIndexed is when a document of the scope was last (re-)indexed; zero if never.
	LastIndexed time.Time
	// Pending counts files a running Sync has found changed and not yet indexed (all tenants).
	Pending int
}

func (s *Stats) add(e entry, orgWide bool) {
	s.Documents++
	if orgWide {
		s.OrgWideDocuments++
	}
	s.Chunks += e.Chunks
	if t := time.Unix(0, e.IndexedAt); t.After(s.LastIndexed) {
		s.LastIndexed = t.UTC()
	}
}

// Stats reports the index state for scope: the zero Scope means everything, a Scope with only OrgID the
// whole organization, a full Scope what that project's searches see (its own and the org-wide documents).
func (s *Store) Stats(scope Scope) Stats {
	st := Stats{ByCollection: map[string]int{}, Pending: int(s.pending.Load())}
	if s.loaded() != nil {
		return st // the manifest is being read in the background
	}
	s.mmu.RLock()
	for p, e := range s.manifest {
		es, collection, _, ok := location(p)
		if !ok {
			continue
		}
		orgWide := es.ProjectID == ""
		switch {
		case scope.OrgID == "":
		case es.OrgID != scope.OrgID:
			continue
		case scope.ProjectID != "" && !orgWide && es.ProjectID != scope.ProjectID:
			continue
		}
		st.add(e, orgWide)
		st.ByCollection[collection]++
	}
	s.mmu.RUnlock()
	st.IndexBytes = dirSize(s.indexDir)
	return st
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
