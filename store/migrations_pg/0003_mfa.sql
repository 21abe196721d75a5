-- PostgreSQL twin of migrations/0003_mfa.sql (same tables, columns, constraints and indexes; TestSchemasMatch).
-- Second factors and command-line sign-in.

-- One enrolled second factor. kind: totp, webauthn, or backup_code (the
-- current set of backup codes, whose codes live in mfa_backup_codes).
CREATE TABLE mfa_methods (
	id TEXT PRIMARY KEY,
	user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	kind TEXT NOT NULL,
	name TEXT NOT NULL DEFAULT '',
	secret BYTEA,                           -- totp: AES-GCM sealed secret (key derived from the server key)
	last_step BIGINT NOT NULL DEFAULT 0,  -- totp: last accepted time step; only later steps are accepted
	credential_id BYTEA,                    -- webauthn: raw credential id
	credential TEXT,                       -- webauthn: the credential record (public key, flags) as JSON
	sign_count BIGINT NOT NULL DEFAULT 0, -- webauthn: highest signature counter seen
	created_at TEXT NOT NULL,
	last_used_at TEXT
);
CREATE INDEX mfa_methods_user ON mfa_methods(user_id, kind);
CREATE UNIQUE INDEX mfa_methods_credential ON mfa_methods(credential_id) WHERE credential_id IS NOT NULL;

-- Backup codes, stored as keyed hashes; each is spent by one conditional UPDATE.
CREATE TABLE mfa_backup_codes (
	id TEXT PRIMARY KEY,
	method_id TEXT NOT NULL REFERENCES mfa_methods(id) ON DELETE CASCADE,
	user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	code_hash BYTEA NOT NULL,
	used_at TEXT,
	created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX mfa_backup_codes_hash ON mfa_backup_codes(user_id, code_hash);

-- Outstanding WebAuthn ceremonies, keyed by a hash of the challenge the
-- client signs; taking one deletes it, so a challenge works once.
CREATE TABLE webauthn_challenges (
	challenge_hash BYTEA PRIMARY KEY,
	user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	purpose TEXT NOT NULL,                 -- register, login
	session TEXT NOT NULL,                 -- go-webauthn SessionData as JSON
	expires_at TEXT NOT NULL
);

-- RFC 8628 device authorization grants for the command-line client.
CREATE TABLE device_grants (
	id TEXT PRIMARY KEY,
	device_code_hash BYTEA NOT NULL UNIQUE,
	user_code TEXT NOT NULL UNIQUE,        -- normalised: 8 letters, no separator
	client_name TEXT NOT NULL DEFAULT '',
	ip TEXT NOT NULL DEFAULT '',
	user_agent TEXT NOT NULL DEFAULT '',
	status TEXT NOT NULL,                  -- pending, approved, denied, consumed
	user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
	org_id TEXT,
	session_id TEXT,                       -- the cli login session it produced
	interval_seconds BIGINT NOT NULL,
	last_polled_at TEXT,
	expires_at TEXT NOT NULL,
	decided_at TEXT,
	created_at TEXT NOT NULL
);
CREATE INDEX device_grants_expires ON device_grants(expires_at);
