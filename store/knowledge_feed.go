package store

import (
	"context"
	"time"
)

// erasedMark is the deleted value the change feed gives an organization's
// erasure (knowledge_erasures), which is no document row; prunedMark the one
// of the row that says the feed was pruned past the reader's position.
const (
	erasedMark = 2
	prunedMark = 3
)

// KnowledgeChanges is the change feed: the documents and tombstones of every
// tenant whose change number is above after, and the erasures of whole
// organizations (Erased), in that order, with their content, at most limit.
// A server's index follows it; it is never served. When tombstones or
// erasures above after were pruned (PruneKnowledgeFeed), the feed also
// holds a Pruned row whose Seq is pruned_through: the reader may have
// missed a deletion, and must rebuild from the documents instead.
//
// One statement, so one snapshot: writers commit in seq order (the feed
// lock), and separate reads could see an erasure without a document change
// committed before it, or miss a prune that removed what they skipped. And
// one round trip for every server's poll every 500 ms.
func (db *DB) KnowledgeChanges(ctx context.Context, after int64, limit int) ([]KnowledgeDoc, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+knowledgeCols+`, content FROM knowledge_documents WHERE seq > ?
		UNION ALL
		SELECT org_id, '', '', '', 0, '', '', '', 2, seq, erased_at, NULL FROM knowledge_erasures WHERE seq > ?
		UNION ALL
		SELECT '', '', '', '', 0, '', '', '', 3, pruned_through, '', NULL FROM knowledge_feed_state WHERE id = 1 AND pruned_through > ?
		ORDER BY seq LIMIT ?`, after, after, after, limit)
	if err != nil {
		return nil, err
	}
	return scanKnowledgeDocs(rows, true)
}

// PruneKnowledgeFeed removes the tombstones of deleted documents and the
// erasures of organizations written before cutoff, and raises
// pruned_through to the highest change number removed, in one transaction.
// It returns how many it removed.
//
// A server starting later never needs them: it rebuilds its index from the
// live documents and drops whatever else its index held. A running server
// has applied them within a second of their commit; one that had stopped
// following for longer than the retention finds its position below
// pruned_through (a Pruned row in its read of the feed) and rebuilds (rag's
// follower), so no deletion is lost whatever the retention.
func (db *DB) PruneKnowledgeFeed(ctx context.Context, cutoff time.Time) (int64, error) {
	var removed int64
	err := db.Write(ctx, func(tx *Tx) error {
		removed = 0
		c := TS(cutoff)
		var top int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM (
			SELECT seq FROM knowledge_documents WHERE deleted = 1 AND updated_at < ?
			UNION ALL SELECT seq FROM knowledge_erasures WHERE erased_at < ?) pruned`, c, c).Scan(&top); err != nil {
			return err
		}
		if top == 0 {
			return nil
		}
		for _, q := range []string{
			`DELETE FROM knowledge_documents WHERE deleted = 1 AND updated_at < ? AND seq <= ?`,
			`DELETE FROM knowledge_erasures WHERE erased_at < ? AND seq <= ?`,
		} {
			res, err := tx.ExecContext(ctx, q, c, top)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			removed += n
		}
		_, err := tx.ExecContext(ctx, `UPDATE knowledge_feed_state SET pruned_through = ? WHERE id = 1 AND pruned_through < ?`, top, top)
		return err
	})
	return removed, err
}

// recordKnowledgeErasuresTx writes, in the transaction that deletes the
// organizations orgIDs, an erasure event for each of them that has document
// rows (tombstones included; the appliance has none): the cascade leaves no
// tombstone, and without it other servers would keep the org's chunks in
// their index until they restart.
func recordKnowledgeErasuresTx(ctx context.Context, tx *Tx, orgIDs []string) error {
	for _, org := range orgIDs {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM knowledge_documents WHERE org_id = ?`, org).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			continue
		}
		seq, err := nextKnowledgeSeq(ctx, tx)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO knowledge_erasures (seq, org_id, erased_at) VALUES (?, ?, ?)`, seq, org, TS(tx.Now)); err != nil {
			return err
		}
	}
	return nil
}
