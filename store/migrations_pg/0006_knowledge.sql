-- PostgreSQL twin of migrations/0006_knowledge.sql (same tables, columns, constraints and indexes; TestSchemasMatch).
-- Knowledge and secrets: vault-encrypted secrets (org-wide and per project)
-- and the agent's long-term memories.

-- A secret: the value is only ever stored as a vault ciphertext bound (aad) to
-- org, project, kind and name, so a row copied elsewhere does not decrypt.
-- kind separates user-named environment secrets ('env') from platform
-- credentials ('llm_key', later webhook and integration secrets) so a user's
-- secret can never shadow one of them.
CREATE TABLE secrets (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	project_id TEXT REFERENCES projects(id) ON DELETE CASCADE, -- NULL: org-wide
	kind TEXT NOT NULL DEFAULT 'env',
	name TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	meta TEXT NOT NULL DEFAULT '{}',       -- non-secret fields (the LLM key's provider, base URL, model)
	ciphertext BYTEA NOT NULL,
	key_id TEXT NOT NULL,                  -- vault key that encrypted it: rotation re-encrypts the others
	created_by TEXT,
	updated_by TEXT,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL,
	last_used_at TEXT
);
CREATE UNIQUE INDEX secrets_scope_name ON secrets(org_id, COALESCE(project_id, ''), kind, name);
CREATE INDEX secrets_key ON secrets(key_id);

-- A long-term memory of the agent about a project (scope 'project') or about
-- the whole organization (scope 'org', project_id NULL). Saving the same key
-- in the same scope updates the row.
CREATE TABLE memories (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	project_id TEXT REFERENCES projects(id) ON DELETE CASCADE,
	scope TEXT NOT NULL,                   -- project, org
	key TEXT NOT NULL,
	title TEXT NOT NULL DEFAULT '',
	text TEXT NOT NULL,
	tags TEXT NOT NULL DEFAULT '[]',
	source_session_id TEXT,
	created_by TEXT,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX memories_scope_key ON memories(org_id, COALESCE(project_id, ''), key);
CREATE INDEX memories_project ON memories(org_id, project_id, updated_at);
