package store

import "context"

// knowledgeFeedLock is the cluster-wide lock every knowledge write holds from
// taking its change number until it commits.
const knowledgeFeedLock = "opsagent:knowledge-feed"

// nextKnowledgeSeq takes the next change number of the knowledge feed.
//
// On PostgreSQL a sequence alone is not enough: numbers are taken in one
// order and committed in another, and a follower that read seq 11 would
// never look back for a seq 10 committed a moment later. So the number is
// taken under a transaction-scoped advisory lock, held until this
// transaction has committed (PostgreSQL makes a commit visible before it
// releases its locks): writers commit in the order of their numbers. Only
// knowledge writes take it, and they are few.
//
// On SQLite the one writer connection already orders them; the highest
// number ever taken may have been pruned (a tombstone), so pruned_through
// counts too: a number is never taken twice.
func nextKnowledgeSeq(ctx context.Context, tx *Tx) (int64, error) {
	var seq int64
	if !tx.db.pg {
		err := tx.QueryRowContext(ctx, `SELECT MAX(n) + 1 FROM (
			SELECT COALESCE(MAX(seq), 0) AS n FROM knowledge_documents
			UNION ALL SELECT COALESCE(MAX(seq), 0) FROM knowledge_erasures
			UNION ALL SELECT pruned_through FROM knowledge_feed_state) taken`).Scan(&seq)
		return seq, err
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?)`, lockKey(knowledgeFeedLock)); err != nil {
		return 0, err
	}
	err := tx.QueryRowContext(ctx, `SELECT nextval('knowledge_seq')`).Scan(&seq)
	return seq, err
}
