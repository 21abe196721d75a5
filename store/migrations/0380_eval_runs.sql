-- Evaluations (issue 37): an org's replays of investigation scenarios
-- against models, scored side by side. The report is kept whole as JSON
-- (it is read as one document: the API's report and the HTML page).
CREATE TABLE eval_runs (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	created_by TEXT NOT NULL DEFAULT '',
	status TEXT NOT NULL,                 -- running, completed, failed, interrupted
	models TEXT NOT NULL DEFAULT '[]',    -- JSON list of model names
	scenarios INTEGER NOT NULL DEFAULT 0,
	repeats INTEGER NOT NULL DEFAULT 1,
	pass_rate REAL NOT NULL DEFAULT 0,
	report TEXT NOT NULL DEFAULT '',
	error TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL,
	finished_at TEXT NOT NULL DEFAULT ''
);
CREATE INDEX eval_runs_org_time ON eval_runs(org_id, created_at, id);
