package rag

// OrgBytes is the size of an org's documents: the total and per project
// ("" for org-wide documents). Billing meters knowledge storage with it.
func (s *Store) OrgBytes(orgID string) (total int64, byProject map[string]int64) {
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
