-- Knowledge documents in the database (issue 20). On PostgreSQL they are the
-- source of truth of the RAG store, shared by every server: each server keeps
-- its own Bleve index as a cache and follows the change feed (seq). The
-- appliance keeps its documents as files under DATA_DIR/rag and leaves this
-- table empty (migrate-to-postgres fills it from the files).
CREATE TABLE knowledge_documents (
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	project_id TEXT NOT NULL,            -- '' for the organization's documents
	collection TEXT NOT NULL,
	name TEXT NOT NULL,
	content BLOB NOT NULL,               -- the whole document, front matter included; empty for a tombstone
	size INTEGER NOT NULL,
	sha256 TEXT NOT NULL,
	title TEXT NOT NULL DEFAULT '',
	tags TEXT NOT NULL DEFAULT '',       -- comma-separated, normalised
	deleted INTEGER NOT NULL DEFAULT 0,  -- 1: a tombstone, so every server's follower removes it
	seq INTEGER NOT NULL,                -- the change feed: a new, higher value on every write
	updated_at TEXT NOT NULL,
	PRIMARY KEY (org_id, project_id, collection, name)
);
CREATE UNIQUE INDEX knowledge_documents_seq ON knowledge_documents(seq);
