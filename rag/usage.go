package rag

import (
	"context"
	"time"
)

// OrgBytes is the size of an org's documents: the total and per project
// ("" for org-wide documents). Billing meters knowledge storage with it.
// With a Source it asks the Source (every server's uploads count at once),
// and falls back on this server's index if the Source does not answer.
func (s *Store) OrgBytes(orgID string) (total int64, byProject map[string]int64) {
	if s.src != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		t, by, err := s.src.Usage(ctx, orgID)
		if err == nil {
			return t, by
		}
		s.log.Warn("rag: knowledge usage from the database failed; counting this server's index", "err", err.Error())
	}
	byProject = map[string]int64{}
	s.mmu.RLock()
	defer s.mmu.RUnlock()
	for p, e := range s.manifest {
		es, _, _, ok := location(p)
		if !ok || es.OrgID != orgID {
			continue
		}
		total += e.Size
		byProject[es.ProjectID] += e.Size
	}
	return total, byProject
}
