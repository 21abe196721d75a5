-- Chat channels: a project's connection to Slack, Telegram or WhatsApp.
-- Credentials (bot token, signing secret, ...) are one vault ciphertext;
-- config is the non-secret JSON (allow-list, unlinked chat, ids).
CREATE TABLE channels (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
	platform TEXT NOT NULL,                 -- slack, telegram, whatsapp
	name TEXT NOT NULL,
	enabled INTEGER NOT NULL DEFAULT 1,
	config TEXT NOT NULL DEFAULT '{}',
	credentials_ct BLOB,
	credentials_key_id TEXT NOT NULL DEFAULT '',
	ignored_count INTEGER NOT NULL DEFAULT 0, -- messages from chats not allowed
	created_by TEXT,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX channels_name ON channels(project_id, name);
CREATE INDEX channels_org ON channels(org_id, project_id);

-- One chat thread (Slack thread, Telegram chat/topic, WhatsApp number) is one
-- session. last_inbound_at is the user's last message (WhatsApp's 24-hour window).
CREATE TABLE channel_threads (
	channel_id TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
	thread_key TEXT NOT NULL,
	conversation TEXT NOT NULL,
	thread TEXT NOT NULL DEFAULT '',
	session_id TEXT NOT NULL REFERENCES agent_sessions(id) ON DELETE CASCADE,
	last_inbound_at TEXT NOT NULL,
	created_at TEXT NOT NULL,
	PRIMARY KEY (channel_id, thread_key)
);
CREATE UNIQUE INDEX channel_threads_session ON channel_threads(session_id);

-- Platform deliveries already processed (event_id, update_id, message id):
-- a retry finds its key here and runs nothing.
CREATE TABLE channel_deliveries (
	channel_id TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
	delivery_key TEXT NOT NULL,
	created_at TEXT NOT NULL,
	PRIMARY KEY (channel_id, delivery_key)
);
CREATE INDEX channel_deliveries_age ON channel_deliveries(created_at);

-- A platform user linked to an opsagent account (by a one-time code).
CREATE TABLE channel_links (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	channel_id TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
	external_user_id TEXT NOT NULL,
	external_name TEXT NOT NULL DEFAULT '',
	user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX channel_links_external ON channel_links(channel_id, external_user_id);

-- One-time link codes; only a hash is kept.
CREATE TABLE channel_link_codes (
	code_hash TEXT PRIMARY KEY,
	org_id TEXT NOT NULL,
	channel_id TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
	user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	expires_at TEXT NOT NULL,
	used_at TEXT,
	created_at TEXT NOT NULL
);

-- Chat messages that show an approval, updated when it is decided anywhere.
CREATE TABLE channel_approval_messages (
	approval_id TEXT NOT NULL,
	channel_id TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
	conversation TEXT NOT NULL,
	message_ref TEXT NOT NULL,
	created_at TEXT NOT NULL,
	PRIMARY KEY (approval_id, channel_id, conversation)
);

-- Where a task's runs (or a routing rule's investigations) post their
-- summary and approvals.
CREATE TABLE channel_targets (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL,
	project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
	channel_id TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
	target_type TEXT NOT NULL,              -- task, rule
	target_id TEXT NOT NULL,
	conversation TEXT NOT NULL,
	created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX channel_targets_target ON channel_targets(project_id, target_type, target_id);
