-- Maintenance windows: while one is active, matching alerts of the project
-- are stored but not dispatched (mode suppress) or dispatched to a run
-- that may only observe (mode observe). Each suppressed event's dispatch
-- record names the window.
CREATE TABLE maintenance_windows (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	starts_at TEXT,                          -- one-off window: [starts_at, ends_at)
	ends_at TEXT,
	schedule TEXT NOT NULL DEFAULT '',       -- recurring window: cron of each start ...
	timezone TEXT NOT NULL DEFAULT 'UTC',
	duration_seconds INTEGER NOT NULL DEFAULT 0, -- ... lasting this long
	match_sources TEXT NOT NULL DEFAULT '[]',    -- webhook providers; [] = any
	match_labels TEXT NOT NULL DEFAULT '{}',     -- label -> glob, every one must match every alert; {} = any
	mode TEXT NOT NULL DEFAULT 'suppress',       -- suppress, observe
	enabled INTEGER NOT NULL DEFAULT 1,
	created_by TEXT,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX maintenance_windows_project ON maintenance_windows(project_id, created_at);

-- Runs started inside an observe-mode window: the policy refuses their
-- change-capable tool calls.
CREATE TABLE observe_only_sessions (
	session_id TEXT PRIMARY KEY REFERENCES agent_sessions(id) ON DELETE CASCADE,
	window_id TEXT NOT NULL,
	created_at TEXT NOT NULL
) WITHOUT ROWID;
