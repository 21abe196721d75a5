-- PostgreSQL twin of migrations/0001_foundation.sql (same tables, columns, constraints and indexes; TestSchemasMatch).
-- Foundation: identity, organizations, projects, login sessions, preferences,
-- client telemetry, the shared agent-session table.

CREATE TABLE users (
	id TEXT PRIMARY KEY,
	email TEXT NOT NULL UNIQUE,            -- stored lowercased
	name TEXT NOT NULL DEFAULT '',
	password_hash TEXT NOT NULL,
	email_verified_at TEXT,
	avatar TEXT NOT NULL DEFAULT '',       -- file name under DATA_DIR/avatars, '' when none
	tokens_valid_after TEXT NOT NULL,      -- logout-all epoch: credentials issued before it are void
	last_login_at TEXT,
	current_org_id TEXT,
	deleted_at TEXT,                       -- erasure requested: the account can no longer sign in
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);

CREATE TABLE organizations (
	id TEXT PRIMARY KEY,
	name TEXT NOT NULL,
	slug TEXT NOT NULL UNIQUE,
	personal BIGINT NOT NULL DEFAULT 0,
	branding TEXT NOT NULL DEFAULT '{}',
	settings TEXT NOT NULL DEFAULT '{}',
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);

CREATE TABLE org_members (
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	role TEXT NOT NULL,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL,
	PRIMARY KEY (org_id, user_id)
);
CREATE INDEX org_members_user ON org_members(user_id);

CREATE TABLE projects (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	slug TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	settings TEXT NOT NULL DEFAULT '{}',
	archived_at TEXT,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL,
	UNIQUE (org_id, slug)
);
CREATE INDEX projects_org ON projects(org_id);

-- A login session: one refresh-token family. Only hashes of refresh tokens are kept.
CREATE TABLE auth_sessions (
	id TEXT PRIMARY KEY,
	user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	salt BYTEA NOT NULL,                    -- per-session input of the refresh-token derivation
	generation BIGINT NOT NULL,           -- how many times the refresh token rotated
	refresh_hash BYTEA NOT NULL,            -- hash of the current refresh token
	prev_refresh_hash BYTEA,                -- hash of the previous one, honoured during the grace window
	rotated_at TEXT,
	user_agent TEXT NOT NULL DEFAULT '',
	ip TEXT NOT NULL DEFAULT '',
	kind TEXT NOT NULL DEFAULT 'web',      -- web, cli
	created_at TEXT NOT NULL,
	last_used_at TEXT NOT NULL,
	expires_at TEXT NOT NULL,
	revoked_at TEXT,
	revoke_reason TEXT NOT NULL DEFAULT ''
);
CREATE INDEX auth_sessions_user ON auth_sessions(user_id);
CREATE UNIQUE INDEX auth_sessions_refresh ON auth_sessions(refresh_hash);
CREATE INDEX auth_sessions_prev ON auth_sessions(prev_refresh_hash);

-- Access-token identifiers revoked before their expiry (logout, switch-org).
CREATE TABLE revoked_tokens (
	jti TEXT PRIMARY KEY,
	expires_at TEXT NOT NULL
);

-- Single-use mailed tokens: password reset, address verification.
CREATE TABLE email_tokens (
	id TEXT PRIMARY KEY,
	user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	kind TEXT NOT NULL,
	token_hash BYTEA NOT NULL UNIQUE,
	expires_at TEXT NOT NULL,
	used_at TEXT,
	created_at TEXT NOT NULL
);
CREATE INDEX email_tokens_user ON email_tokens(user_id, kind);

CREATE TABLE preferences (
	user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	key TEXT NOT NULL,
	value TEXT NOT NULL,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL,
	PRIMARY KEY (user_id, key)
);

CREATE TABLE erasure_requests (
	id TEXT PRIMARY KEY,
	user_id TEXT NOT NULL,
	requested_at TEXT NOT NULL,
	completed_at TEXT
);

CREATE TABLE client_errors (
	id TEXT PRIMARY KEY,
	path TEXT NOT NULL,
	message TEXT NOT NULL,
	stack TEXT NOT NULL,
	user_agent TEXT NOT NULL,
	created_at TEXT NOT NULL
);

CREATE TABLE client_events (
	id TEXT PRIMARY KEY,
	event TEXT NOT NULL,
	props TEXT NOT NULL,
	user_id TEXT,
	created_at TEXT NOT NULL
);

-- Agent sessions are shared by chat, tasks and webhooks.
CREATE TABLE agent_sessions (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
	name TEXT NOT NULL DEFAULT '',
	title TEXT NOT NULL DEFAULT '',
	summary TEXT NOT NULL DEFAULT '',
	first_prompt TEXT NOT NULL DEFAULT '',
	task_id TEXT,
	task_name TEXT NOT NULL DEFAULT '',
	agent_type TEXT NOT NULL DEFAULT 'general',
	source TEXT NOT NULL,                  -- webchat, telegram, slack, whatsapp, task
	trigger_source TEXT NOT NULL,          -- manual, scheduled, webhook, web
	status TEXT NOT NULL,                  -- pending, running, completed, failed, cancelled, timeout
	reason TEXT NOT NULL DEFAULT '',
	model TEXT NOT NULL DEFAULT '',
	created_by TEXT,
	tokens_in BIGINT NOT NULL DEFAULT 0,
	tokens_out BIGINT NOT NULL DEFAULT 0,
	cost DOUBLE PRECISION NOT NULL DEFAULT 0,
	duration_ms BIGINT NOT NULL DEFAULT 0,
	started_at TEXT,
	ended_at TEXT,
	last_activity TEXT NOT NULL,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX agent_sessions_project ON agent_sessions(project_id, last_activity);
CREATE INDEX agent_sessions_org ON agent_sessions(org_id, created_at);
CREATE INDEX agent_sessions_task ON agent_sessions(task_id);
