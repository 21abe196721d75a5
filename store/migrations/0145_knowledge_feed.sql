-- The knowledge change feed's two missing events (issue 20). On PostgreSQL
-- every server's index follows knowledge_documents by seq; the appliance
-- leaves both tables empty.
--
-- An erased organization loses its document rows by cascade, leaving no
-- tombstone: its erasure is written here, in the erasure's transaction, with
-- a seq of the same numbering, so every server's follower drops the org's
-- chunks. No foreign key: the organization is gone.
CREATE TABLE knowledge_erasures (
	seq INTEGER PRIMARY KEY,
	org_id TEXT NOT NULL,
	erased_at TEXT NOT NULL
);
-- Tombstones and erasures are pruned once every server has long seen them
-- (store.PruneKnowledgeFeed). pruned_through is the highest seq pruned: a
-- follower whose position is below it may have missed a deletion, and
-- rebuilds its index from the documents instead of following. One row.
CREATE TABLE knowledge_feed_state (
	id INTEGER PRIMARY KEY,
	pruned_through INTEGER NOT NULL
);
INSERT INTO knowledge_feed_state (id, pruned_through) VALUES (1, 0);
