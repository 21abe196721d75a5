-- PostgreSQL twin of migrations/0002_tenancy.sql (same tables, columns, constraints and indexes; TestSchemasMatch).
-- Tenancy: project access, API keys, invitations, onboarding, idempotency and
-- the hash-chained audit log.

-- A restricted project is visible to org owners and admins and to its
-- explicit members only; an open one to every member of the org.
ALTER TABLE projects ADD COLUMN restricted BIGINT NOT NULL DEFAULT 0;

-- Explicit project access. role caps the member's org role inside the project.
CREATE TABLE project_members (
	project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	role TEXT NOT NULL,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL,
	PRIMARY KEY (project_id, user_id)
);
CREATE INDEX project_members_user ON project_members(org_id, user_id);

-- Machine credentials. Only a hash of the secret is kept; prefix finds the row.
CREATE TABLE api_keys (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	created_by TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	prefix TEXT NOT NULL UNIQUE,
	secret_hash BYTEA NOT NULL,
	scopes TEXT NOT NULL,                  -- JSON array of permission names or "*"
	projects TEXT NOT NULL DEFAULT '[]',   -- JSON array of project ids; empty = every project the creator sees
	expires_at TEXT,
	last_used_at TEXT,
	last_ip TEXT NOT NULL DEFAULT '',
	revoked_at TEXT,
	created_at TEXT NOT NULL
);
CREATE INDEX api_keys_org ON api_keys(org_id, created_at);

-- Addresses a key was used from, to audit the first use of each.
CREATE TABLE api_key_ips (
	key_id TEXT NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
	ip TEXT NOT NULL,
	first_seen_at TEXT NOT NULL,
	PRIMARY KEY (key_id, ip)
);

CREATE TABLE invitations (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	email TEXT NOT NULL,                   -- lowercased; the invitation is bound to it
	role TEXT NOT NULL,
	token_hash BYTEA NOT NULL UNIQUE,
	invited_by TEXT REFERENCES users(id) ON DELETE SET NULL,
	expires_at TEXT NOT NULL,
	accepted_at TEXT,
	accepted_by TEXT,
	revoked_at TEXT,
	created_at TEXT NOT NULL
);
CREATE INDEX invitations_org ON invitations(org_id, created_at);

CREATE TABLE onboarding (
	user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
	status TEXT NOT NULL,                  -- pending, skipped, completed
	org_id TEXT,
	project_id TEXT,
	task_id TEXT,
	updated_at TEXT NOT NULL
);

-- Stored responses of requests sent with an Idempotency-Key.
CREATE TABLE idempotency_keys (
	user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	scope TEXT NOT NULL,
	key TEXT NOT NULL,
	request_hash TEXT NOT NULL,
	status BIGINT NOT NULL,
	response TEXT NOT NULL,
	created_at TEXT NOT NULL,
	PRIMARY KEY (user_id, scope, key)
);

-- The audit log. seq orders the events of one org; hash = sha256 over the
-- canonical fields and prev_hash, so an edited or deleted row breaks the chain.
-- org_id '' holds events that belong to no org (failed sign-in of an unknown address).
CREATE TABLE audit_events (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL,
	seq BIGINT NOT NULL,
	project_id TEXT NOT NULL DEFAULT '',
	actor_user_id TEXT NOT NULL DEFAULT '',
	actor_key_id TEXT NOT NULL DEFAULT '',
	action TEXT NOT NULL,
	outcome TEXT NOT NULL,
	target_type TEXT NOT NULL DEFAULT '',
	target_id TEXT NOT NULL DEFAULT '',
	ip TEXT NOT NULL DEFAULT '',
	user_agent TEXT NOT NULL DEFAULT '',
	detail TEXT NOT NULL DEFAULT '{}',
	created_at TEXT NOT NULL,
	prev_hash TEXT NOT NULL,
	hash TEXT NOT NULL,
	UNIQUE (org_id, seq)
);
CREATE INDEX audit_events_org_time ON audit_events(org_id, created_at);
CREATE INDEX audit_events_org_action ON audit_events(org_id, action);
