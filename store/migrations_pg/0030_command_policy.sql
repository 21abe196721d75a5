-- PostgreSQL twin of migrations/0030_command_policy.sql (same tables, columns, constraints and indexes; TestSchemasMatch).
-- Rules decide on parsed commands (issue 22). A must_never rule that applies
-- to run_command blocks calls whose analysis is opaque unless allow_opaque
-- relaxes it, deliberately and visibly.
ALTER TABLE rules ADD COLUMN allow_opaque BIGINT NOT NULL DEFAULT 0;

-- A project's command policy: whether provably read-only commands run
-- without a person, the project's additions to the read-only list, and its
-- additions to the effect categories (JSON: {"category": ["pattern", ...]}).
CREATE TABLE command_policies (
	project_id TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	auto_allow_read_only BIGINT NOT NULL DEFAULT 0,
	read_only_commands TEXT NOT NULL DEFAULT '[]',
	effects TEXT NOT NULL DEFAULT '{}',
	updated_by TEXT,
	updated_at TEXT NOT NULL
);
CREATE INDEX command_policies_org ON command_policies(org_id);
