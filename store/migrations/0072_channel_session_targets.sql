-- The chat a webhook run posts its approvals and outcome to, when the
-- routing rule that started it has a chat target (channel_targets, rule).
CREATE TABLE channel_session_targets (
	session_id TEXT PRIMARY KEY REFERENCES agent_sessions(id) ON DELETE CASCADE,
	channel_id TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
	conversation TEXT NOT NULL,
	created_at TEXT NOT NULL
);
