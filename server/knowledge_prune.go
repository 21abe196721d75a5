package server

import (
	"context"
	"time"
)

// KnowledgeFeedRetention is how long the knowledge change feed keeps the
// tombstone of a deleted document and the erasure of an organization on a
// PostgreSQL cluster before the hourly "knowledge-feed-prune" job removes
// them. Every running server applies them within a second or two (it reads
// the feed every 500 ms); a server starting later rebuilds its index from
// the documents and needs none. A day is far above both. A server that
// stopped following for longer (suspended, partitioned) is not trusted to
// have seen them: it finds the feed pruned past its position and rebuilds
// its index (rag's follower), so the retention bounds the feed's size, not
// correctness.
const KnowledgeFeedRetention = 24 * time.Hour

// pruneKnowledgeFeed is the hourly job, registered only on a shared
// database (the appliance's documents are files, and it has no feed). Every
// server runs it; the runs are idempotent and serialized by the database.
func (s *Server) pruneKnowledgeFeed(ctx context.Context) error {
	_, err := s.RunKnowledgePrune(ctx, s.Now().Add(-KnowledgeFeedRetention))
	return err
}

// RunKnowledgePrune removes the feed's tombstones and erasures written
// before cutoff and returns how many (the job, tests and operators).
func (s *Server) RunKnowledgePrune(ctx context.Context, cutoff time.Time) (int64, error) {
	n, err := s.db.PruneKnowledgeFeed(ctx, cutoff)
	if err == nil && n > 0 {
		s.log.Info("knowledge feed pruned", "removed", n, "before", cutoff.UTC().Format(time.RFC3339))
	}
	return n, err
}
