package store

import (
	"context"
	"database/sql"
)

// A batch's correlation keys are looked up in one query per project and
// chunk before its events are dispatched. In a storm of distinct groups
// nearly every key is new: each event's own lookup (a join with the
// incidents, sorted by last alert) found nothing, one statement per event.
// The prefetch only learns which keys the database holds at all; a key it
// holds is still looked up in full as the event is dispatched (open,
// within the window, the latest), and a key it does not hold can only
// have been added since by this batch, which finds those in txStmts.open.

// A key is an incident_keys row or an open incident's main_key (migration
// 0157): the statement's arguments are the project and the keys, twice.
const prefetchKeysHead = `SELECT key FROM incident_keys WHERE project_id = ? AND key IN (`

// prefetchKeysStmts are the prefetch's statements by key count.
var prefetchKeysStmts = func() map[int]string {
	m := inStmts(prefetchKeysHead)
	for n, q := range m {
		in := q[len(prefetchKeysHead):]
		m[n] = q + ` UNION ALL SELECT main_key FROM incidents WHERE project_id = ? AND main_key IN (` + in +
			` AND status != 'resolved'`
	}
	return m
}()

func init() { addIngestStmts(prefetchKeysStmts) }

// prefetchKeys records, for the correlation keys of the batch's n plans
// (at(i): the project and correlation of the i-th, nil when none), whether
// the database holds each (txStmts.probed).
func (s *txStmts) prefetchKeys(ctx context.Context, n int, at func(i int) (string, *Correlation)) error {
	s.queueKeys(n, at)
	return s.runQueued(ctx)
}

// queueKeys is prefetchKeys' queries, queued to run with the batch's
// other prefetch queries (runQueued).
func (s *txStmts) queueKeys(n int, at func(i int) (string, *Correlation)) {
	byProject := map[string][]string{}
	for i := 0; i < n; i++ {
		project, c := at(i)
		if c == nil {
			continue
		}
		for _, k := range c.Keys {
			mk := project + "\x00" + k
			if _, seen := s.probed[mk]; seen {
				continue
			}
			s.probed[mk] = false
			byProject[project] = append(byProject[project], k)
		}
	}
	for project, keys := range byProject {
		if s.tx.db.pg { // one statement, the keys an array (webhook_ingest_prefetch_pg.go)
			s.queued = append(s.queued, queuedQuery{prefetchKeysPG, []any{project, pgTextArray(keys)}, s.storedKeys(project)})
			continue
		}
		for len(keys) > 0 {
			n := chunk(len(keys))
			args := make([]any, 0, 2*n+2)
			args = append(args, project)
			for _, k := range keys[:n] {
				args = append(args, k)
			}
			args = append(args, args...)
			s.queued = append(s.queued, queuedQuery{prefetchKeysStmts[n], args, s.storedKeys(project)})
			keys = keys[n:]
		}
	}
}

// storedKeys scans the keys of project the database holds.
func (s *txStmts) storedKeys(project string) func(*sql.Rows) error {
	return func(rows *sql.Rows) error {
		var k string
		if err := rows.Scan(&k); err != nil {
			return err
		}
		s.probed[project+"\x00"+k] = true
		return nil
	}
}

// keyAbsent reports that the prefetch found no row of the key: the
// database's index and incident_keys hold none (a row the batch added
// since is in txStmts.open). A key memory holds (main_key_held) is in
// neither: keyFind asks memory first.
func (s *txStmts) keyAbsent(projectID, key string) bool {
	stored, probed := s.probed[string(s.projectKey(projectID, key))]
	return probed && !stored
}

// projectKey is project "\x00" key, the batch's maps' key (probed, open),
// in a buffer reused for looking them up: m[string(b)] does not copy b,
// where m[project+"\x00"+key] built a string for every look-up.
func (s *txStmts) projectKey(projectID, key string) []byte {
	s.keyBuf = append(append(append(s.keyBuf[:0], projectID...), 0), key...)
	return s.keyBuf
}
