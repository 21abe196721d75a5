-- Postmortem drafts: the Markdown lives in the project's knowledge store
-- (collection incidents, document postmortem-<incident id>.md) where a
-- person edits it; this row tracks its state and the records it cites.
CREATE TABLE postmortems (
	incident_id TEXT PRIMARY KEY REFERENCES incidents(id) ON DELETE CASCADE,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
	status TEXT NOT NULL DEFAULT 'drafting',  -- drafting, draft, published, failed
	document TEXT NOT NULL,                   -- knowledge document name
	cited TEXT NOT NULL DEFAULT '[]',         -- record labels the draft cites (verified)
	invalid TEXT NOT NULL DEFAULT '[]',       -- labels the model wrote that matched no record (removed)
	model TEXT NOT NULL DEFAULT '',           -- '' when drafted without a model
	error TEXT NOT NULL DEFAULT '',
	published_by TEXT,
	published_at TEXT,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX postmortems_project ON postmortems(project_id, created_at);

-- An organization's postmortem template: the section headings, in order.
CREATE TABLE postmortem_templates (
	org_id TEXT PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
	sections TEXT NOT NULL,                   -- JSON array of headings
	updated_by TEXT,
	updated_at TEXT NOT NULL
);
