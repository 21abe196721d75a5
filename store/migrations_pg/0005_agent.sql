-- PostgreSQL twin of migrations/0005_agent.sql (same tables, columns, constraints and indexes; TestSchemasMatch).
-- Agent sessions, part 1: the transcript, the event log every live viewer
-- and every reconnect reads, idempotent resumes, and the counters the
-- dashboards read without scanning transcripts.

-- waiting_approval: the session is running but its last turn stopped at a
-- tool call a person must decide on (statuses stay the spec's six).
ALTER TABLE agent_sessions ADD COLUMN waiting_approval BIGINT NOT NULL DEFAULT 0;
ALTER TABLE agent_sessions ADD COLUMN turns BIGINT NOT NULL DEFAULT 0;      -- runs of the agent (first prompt, chat turns, resumes)
ALTER TABLE agent_sessions ADD COLUMN steps BIGINT NOT NULL DEFAULT 0;      -- model calls, all turns
ALTER TABLE agent_sessions ADD COLUMN tool_calls BIGINT NOT NULL DEFAULT 0; -- tool calls, all turns
ALTER TABLE agent_sessions ADD COLUMN approvals BIGINT NOT NULL DEFAULT 0;  -- times a turn stopped for approval

-- The conversation as the agent library keeps it (JSON []llm.Message), tool
-- output in full; replaced at the end of every turn. pending is the JSON
-- agent.Pending while waiting for approval, else ''.
CREATE TABLE session_transcripts (
	session_id TEXT PRIMARY KEY REFERENCES agent_sessions(id) ON DELETE CASCADE,
	messages TEXT NOT NULL,
	pending TEXT NOT NULL DEFAULT '',
	updated_at TEXT NOT NULL
);

-- Every event of every turn, numbered per session: the SSE id. A viewer
-- that reconnects with Last-Event-ID reads what it missed from here.
CREATE TABLE session_events (
	session_id TEXT NOT NULL REFERENCES agent_sessions(id) ON DELETE CASCADE,
	seq BIGINT NOT NULL,
	type TEXT NOT NULL,
	data TEXT NOT NULL,
	created_at TEXT NOT NULL,
	PRIMARY KEY (session_id, seq)
);

-- Idempotency-Key of POST /api/sessions/{session_ref}/resume: the same key on
-- the same session answers the turn it started and never starts another.
CREATE TABLE session_resumes (
	session_id TEXT NOT NULL REFERENCES agent_sessions(id) ON DELETE CASCADE,
	idem_key TEXT NOT NULL,
	turn BIGINT NOT NULL,
	first_seq BIGINT NOT NULL,
	created_at TEXT NOT NULL,
	PRIMARY KEY (session_id, idem_key)
);

CREATE INDEX agent_sessions_scope_created ON agent_sessions(org_id, project_id, created_at);
CREATE INDEX agent_sessions_name ON agent_sessions(project_id, name) WHERE name != '';
