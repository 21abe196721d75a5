-- PostgreSQL twin of migrations/0007_webhooks.sql (same tables, columns, constraints and indexes; TestSchemasMatch).
-- Inbound webhooks (spec 4.7), their routing rules and events, approvals
-- (generic: webhook events now, agent tool calls later) and incidents.

-- One webhook per task: the task id is the receiver's address.
CREATE TABLE webhooks (
	task_id TEXT PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
	org_id TEXT NOT NULL,
	project_id TEXT NOT NULL,
	provider TEXT NOT NULL,
	scheme TEXT NOT NULL,
	secret_ct BYTEA,                        -- vault ciphertext, AAD webhook:<task_id>
	prev_secret_ct BYTEA,                   -- previous secret during a rotation overlap
	prev_valid_until TEXT,
	enabled BIGINT NOT NULL DEFAULT 1,
	routing_mode TEXT NOT NULL DEFAULT 'first_match', -- first_match, fan_out
	rate_limit_per_minute BIGINT NOT NULL DEFAULT 600,
	dedupe_window_seconds BIGINT NOT NULL DEFAULT 60,
	retention_days BIGINT NOT NULL DEFAULT 30,
	metadata_only BIGINT NOT NULL DEFAULT 0,
	redact_globs TEXT NOT NULL DEFAULT '[]',
	correlate BIGINT NOT NULL DEFAULT 0,
	correlation_window_seconds BIGINT NOT NULL DEFAULT 3600,
	approval_ttl_seconds BIGINT NOT NULL DEFAULT 86400,
	badge_token TEXT NOT NULL UNIQUE,
	secret_rotated_at TEXT,
	created_by TEXT,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX webhooks_project ON webhooks(project_id);

-- Received deliveries, redacted before they were written. status:
-- received (acknowledged, not yet dispatched), dispatched, no_match,
-- approval_pending, correlated (joined an open incident), failed.
CREATE TABLE webhook_events (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL,
	project_id TEXT NOT NULL,
	task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	received_at TEXT NOT NULL,
	provider TEXT NOT NULL,
	event_type TEXT NOT NULL DEFAULT '',
	idem_key TEXT,
	body_hash TEXT NOT NULL,
	verification TEXT NOT NULL,             -- scheme that verified it; 'test' for test deliveries
	headers TEXT NOT NULL DEFAULT '{}',     -- credential headers removed
	body BYTEA,                              -- redacted; NULL in metadata-only mode once dispatched
	body_size BIGINT NOT NULL,
	raw BIGINT NOT NULL DEFAULT 0,         -- generic provider, body was not JSON
	alerts TEXT NOT NULL DEFAULT '[]',
	status TEXT NOT NULL DEFAULT 'received',
	dispatch TEXT NOT NULL DEFAULT '[]',    -- what it dispatched: runs, approvals, incident
	error TEXT NOT NULL DEFAULT '',
	replay_of TEXT,
	test BIGINT NOT NULL DEFAULT 0,
	dispatched_at TEXT
);
CREATE UNIQUE INDEX webhook_events_idem ON webhook_events(task_id, idem_key) WHERE idem_key IS NOT NULL;
CREATE INDEX webhook_events_task ON webhook_events(task_id, received_at);
CREATE INDEX webhook_events_hash ON webhook_events(task_id, body_hash, received_at);
CREATE INDEX webhook_events_pending ON webhook_events(received_at) WHERE status = 'received';

CREATE TABLE webhook_rules (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL,
	project_id TEXT NOT NULL,
	task_id TEXT NOT NULL REFERENCES webhooks(task_id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	priority BIGINT NOT NULL DEFAULT 100,
	condition TEXT NOT NULL DEFAULT '',
	target_task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	requires_approval BIGINT NOT NULL DEFAULT 0,
	enabled BIGINT NOT NULL DEFAULT 1,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX webhook_rules_task ON webhook_rules(task_id, priority);

-- Approvals: something waits for a person. kind webhook_event | tool_call;
-- subject is what will run (JSON). A decision is single-use.
CREATE TABLE approvals (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL,
	project_id TEXT NOT NULL,
	kind TEXT NOT NULL,
	session_id TEXT,
	subject TEXT NOT NULL DEFAULT '{}',
	title TEXT NOT NULL DEFAULT '',
	reason TEXT NOT NULL DEFAULT '',
	rule_id TEXT,
	event_id TEXT,
	status TEXT NOT NULL DEFAULT 'pending',  -- pending, approved, denied, expired
	expires_at TEXT NOT NULL,
	decided_by TEXT,
	decided_at TEXT,
	comment TEXT NOT NULL DEFAULT '',
	result TEXT NOT NULL DEFAULT '{}',       -- what approving did
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX approvals_project ON approvals(project_id, status, created_at);
CREATE INDEX approvals_expiry ON approvals(expires_at) WHERE status = 'pending';
CREATE UNIQUE INDEX approvals_event_rule ON approvals(event_id, rule_id) WHERE event_id IS NOT NULL;

-- Incidents: correlated alerts, one investigation each.
CREATE TABLE incidents (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL,
	project_id TEXT NOT NULL,
	task_id TEXT,
	provider TEXT NOT NULL,
	title TEXT NOT NULL,
	severity TEXT NOT NULL,
	status TEXT NOT NULL DEFAULT 'triggered', -- triggered, acknowledged, resolved
	alert_count BIGINT NOT NULL DEFAULT 0,
	event_count BIGINT NOT NULL DEFAULT 0,
	session_id TEXT,
	opened_at TEXT NOT NULL,
	last_alert_at TEXT NOT NULL,
	acknowledged_at TEXT,
	acknowledged_by TEXT,
	resolved_at TEXT,
	resolved_by TEXT,
	summary TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX incidents_project ON incidents(project_id, status, last_alert_at);

-- Correlation keys (group keys, fingerprints) of open incidents.
CREATE TABLE incident_keys (
	project_id TEXT NOT NULL,
	key TEXT NOT NULL,
	incident_id TEXT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
	PRIMARY KEY (project_id, key, incident_id)
);

CREATE TABLE incident_timeline (
	id TEXT PRIMARY KEY,
	incident_id TEXT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
	at TEXT NOT NULL,
	kind TEXT NOT NULL,            -- alert, session, approval, note, status
	actor TEXT,
	text TEXT NOT NULL DEFAULT '',
	data TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX incident_timeline_incident ON incident_timeline(incident_id, at);
