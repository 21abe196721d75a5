-- PostgreSQL twin of migrations/0051_retention.sql (same tables, columns, constraints and indexes; TestSchemasMatch).
-- Retention per organization. A NULL column takes the server default
-- (docs/operations.md); 0 keeps forever.
CREATE TABLE retention_policies (
	org_id TEXT PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
	transcripts_days BIGINT,
	sessions_days BIGINT,
	audit_days BIGINT,
	updated_at TEXT NOT NULL
);

-- Where an org's audit chain now starts: the last event moved to an archive
-- segment (DATA_DIR/audit-archive/<org>/<first>-<last>.jsonl). The first
-- event still stored has prev_hash = hash and seq = seq + 1.
CREATE TABLE audit_anchors (
	org_id TEXT PRIMARY KEY,
	seq BIGINT NOT NULL,
	hash TEXT NOT NULL,
	segment TEXT NOT NULL,
	archived_at TEXT NOT NULL
);

CREATE INDEX agent_sessions_org_ended ON agent_sessions(org_id, ended_at) WHERE ended_at IS NOT NULL;
