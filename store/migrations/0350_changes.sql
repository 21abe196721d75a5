-- The change feed (issue 36): deploys, releases, configuration changes and
-- the agent's own approved actions, one row each, so an investigation can
-- ask "what changed before this alert". dedupe_key is the caller's
-- external_id, or a hash of the content when none was given: the same
-- change sent twice is stored once.
CREATE TABLE changes (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
	source TEXT NOT NULL,                     -- github, gitlab, generic, agent, api, kubernetes
	kind TEXT NOT NULL,                       -- deploy, config, release, push, pipeline, tag, action, rollout, ...
	title TEXT NOT NULL,
	service TEXT NOT NULL DEFAULT '',
	environment TEXT NOT NULL DEFAULT '',
	description TEXT NOT NULL DEFAULT '',
	url TEXT NOT NULL DEFAULT '',
	labels TEXT NOT NULL DEFAULT '{}',        -- JSON object of strings
	label_pairs TEXT NOT NULL DEFAULT '',     -- "|k=v|k2=v2|": the label filter's LIKE target
	author TEXT NOT NULL DEFAULT '',
	external_id TEXT NOT NULL DEFAULT '',
	dedupe_key TEXT NOT NULL,
	occurred_at TEXT NOT NULL,
	created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX changes_dedupe ON changes(project_id, source, dedupe_key);
CREATE INDEX changes_project_time ON changes(project_id, occurred_at, id);
CREATE INDEX changes_created ON changes(created_at);
