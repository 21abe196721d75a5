-- Heartbeat checks (dead-man's switches): a cron job or backup pings the
-- check's URL; a missing or failed ping opens an incident, once per miss.
-- The state that makes "once" hold across restarts lives here: a check is
-- marked down and its incident recorded in one transaction.
CREATE TABLE heartbeat_checks (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	token_hash TEXT NOT NULL UNIQUE,          -- SHA-256 (hex) of the ping secret; the secret is shown once
	badge_token TEXT NOT NULL UNIQUE,         -- public, unrelated to the secret
	schedule TEXT NOT NULL DEFAULT '',        -- 5-field cron; '' when period_seconds is used
	timezone TEXT NOT NULL DEFAULT 'UTC',
	period_seconds INTEGER NOT NULL DEFAULT 0,
	grace_seconds INTEGER NOT NULL,
	task_id TEXT REFERENCES tasks(id) ON DELETE SET NULL, -- run on a miss (optional)
	enabled INTEGER NOT NULL DEFAULT 1,
	status TEXT NOT NULL DEFAULT 'new',       -- new, up, started, down
	last_ping_at TEXT,
	last_ping_kind TEXT NOT NULL DEFAULT '',  -- success, fail, start
	started_at TEXT,                          -- an unfinished start ping
	last_duration_ms INTEGER,
	due_at TEXT NOT NULL,                     -- when the next ping is expected
	deadline_at TEXT NOT NULL,                -- due_at + grace (or start + grace): past it, a miss
	misses INTEGER NOT NULL DEFAULT 0,        -- numbers each miss: the exactly-once key of its incident and run
	incident_id TEXT,                         -- the incident of the current miss
	created_by TEXT,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX heartbeat_checks_project ON heartbeat_checks(project_id, created_at);
CREATE INDEX heartbeat_checks_deadline ON heartbeat_checks(deadline_at) WHERE status != 'down' AND enabled = 1;

-- Every ping, newest last; swept with the check.
CREATE TABLE heartbeat_pings (
	id TEXT PRIMARY KEY,
	check_id TEXT NOT NULL REFERENCES heartbeat_checks(id) ON DELETE CASCADE,
	at TEXT NOT NULL,
	kind TEXT NOT NULL,                       -- success, fail, start
	duration_ms INTEGER,                      -- success or fail after a start
	miss INTEGER NOT NULL DEFAULT 0           -- the ping opened miss number N (fail pings)
);
CREATE INDEX heartbeat_pings_check ON heartbeat_pings(check_id, at);
