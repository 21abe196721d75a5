-- PostgreSQL twin of migrations/0060_connectors.sql (same tables, columns, constraints and indexes; TestSchemasMatch).
-- Connectors: outbound-only agents on a project's hosts. The enrollment
-- token is stored as a SHA-256 hash under a public prefix (like API keys);
-- the token itself is shown once. Host facts (hostname, os, version) are
-- what the connector reported when it last registered.
CREATE TABLE connectors (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	labels TEXT NOT NULL DEFAULT '{}',      -- JSON object of label -> value
	allow_list TEXT NOT NULL DEFAULT '[]',  -- JSON array of command patterns; [] allows every command
	token_prefix TEXT NOT NULL,
	token_hash BYTEA NOT NULL,
	hostname TEXT NOT NULL DEFAULT '',
	os TEXT NOT NULL DEFAULT '',
	version TEXT NOT NULL DEFAULT '',
	last_ip TEXT NOT NULL DEFAULT '',
	last_seen_at TEXT,
	revoked_at TEXT,
	created_by TEXT,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX connectors_name ON connectors(project_id, name);
CREATE UNIQUE INDEX connectors_token ON connectors(token_prefix);
CREATE INDEX connectors_org ON connectors(org_id, project_id);

-- The longest a run_command may run in this project (seconds); calls
-- asking for more are cut to it.
ALTER TABLE projects ADD COLUMN command_timeout_max BIGINT NOT NULL DEFAULT 600;
