-- A project's sandbox profile (issue 33): the paths approved commands may
-- write (JSON list of absolute paths; empty: wherever the host's user may).
-- A connector host narrows it further with its own --sandbox-profile.
CREATE TABLE sandbox_profiles (
	project_id TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	allow_paths TEXT NOT NULL DEFAULT '[]',
	updated_by TEXT,
	updated_at TEXT NOT NULL
);
CREATE INDEX sandbox_profiles_org ON sandbox_profiles(org_id);
