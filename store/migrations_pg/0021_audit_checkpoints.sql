-- PostgreSQL twin of migrations/0021_audit_checkpoints.sql (same tables, columns, constraints and indexes; TestSchemasMatch).
-- Signed checkpoints of each organization's audit chain (head seq, count,
-- head hash), published on every verify and export. A later verify checks
-- the chain still reaches the newest checkpoint with the same hash, so
-- deleting the newest events (which leaves the rest of the chain intact)
-- is detected.
CREATE TABLE audit_checkpoints (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL,
	seq BIGINT NOT NULL,
	head_hash TEXT NOT NULL,
	created_at TEXT NOT NULL,
	signature TEXT NOT NULL
);
CREATE INDEX audit_checkpoints_org ON audit_checkpoints(org_id, seq);
