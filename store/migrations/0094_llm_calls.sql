-- Model calls made outside agent sessions (postmortem drafts): their cost
-- counts against the project's and org's spending caps like a run's.
CREATE TABLE llm_calls (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
	purpose TEXT NOT NULL,                 -- postmortem
	subject_id TEXT NOT NULL DEFAULT '',   -- the incident
	model TEXT NOT NULL,
	tokens_in INTEGER NOT NULL,
	tokens_out INTEGER NOT NULL,
	cost REAL NOT NULL,
	created_at TEXT NOT NULL
);
CREATE INDEX llm_calls_org_created ON llm_calls(org_id, created_at);
