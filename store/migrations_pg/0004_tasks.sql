-- PostgreSQL twin of migrations/0004_tasks.sql (same tables, columns, constraints and indexes; TestSchemasMatch).
-- Tasks: saved agent work that runs on a schedule, on demand or from a webhook.
-- A run is an agent_sessions row (source 'task'); task_runs is its durable
-- fire record, whose UNIQUE run_key makes every fire happen exactly once.

CREATE TABLE tasks (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	prompt TEXT NOT NULL,
	agent_type TEXT NOT NULL DEFAULT 'general',
	schedule TEXT NOT NULL DEFAULT '',          -- 5-field cron or descriptor; '' = on demand only
	timezone TEXT NOT NULL DEFAULT 'UTC',       -- IANA name the schedule is read in
	enabled BIGINT NOT NULL DEFAULT 1,
	missed_fire_policy TEXT NOT NULL DEFAULT 'run_once', -- skip, run_once
	overlap_policy TEXT NOT NULL DEFAULT 'skip',         -- skip, queue
	timeout_seconds BIGINT NOT NULL DEFAULT 900,
	max_steps BIGINT NOT NULL DEFAULT 30,
	max_cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0,       -- 0 = no per-run cost cap
	template_id TEXT NOT NULL DEFAULT '',
	created_by TEXT,
	last_run_at TEXT,
	last_status TEXT NOT NULL DEFAULT '',
	last_session_id TEXT,
	last_error TEXT NOT NULL DEFAULT '',
	next_run_at TEXT,                           -- NULL when disabled or unscheduled
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX tasks_project ON tasks(project_id, created_at);
CREATE INDEX tasks_due ON tasks(next_run_at) WHERE enabled = 1 AND next_run_at IS NOT NULL;

-- One row per fire or trigger, written in the same transaction as its session.
-- run_key: 'sched:<task>:<scheduled time>' or 'manual:<task>:<idempotency key or session id>'.
CREATE TABLE task_runs (
	session_id TEXT PRIMARY KEY REFERENCES agent_sessions(id) ON DELETE CASCADE,
	task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	org_id TEXT NOT NULL,
	run_key TEXT NOT NULL UNIQUE,
	scheduled_for TEXT,
	missed_fires BIGINT NOT NULL DEFAULT 0,    -- fires folded into this one by missed_fire_policy run_once
	created_at TEXT NOT NULL
);
CREATE INDEX task_runs_task ON task_runs(task_id, created_at);
CREATE INDEX agent_sessions_status ON agent_sessions(status, created_at);
