-- PostgreSQL twin of migrations/0008_policy.sql (same tables, columns, constraints and indexes; TestSchemasMatch).
-- Policy: must_always / must_never rules, spending caps, monitoring
-- integrations and the outbound allow-list of the agent's http_request.

-- A runtime rule of an org (project_id NULL: every project) or a project.
-- kind must_never has effect block; kind must_always has effect
-- require_approval, obligation (only told to the model) or allow
-- (pre-approved: a matching change runs without asking anyone).
-- tool '' matches every tool; match_type '' matches every call of the tool.
CREATE TABLE rules (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	project_id TEXT REFERENCES projects(id) ON DELETE CASCADE,
	kind TEXT NOT NULL,                    -- must_always, must_never
	effect TEXT NOT NULL,                  -- block, require_approval, obligation, allow
	description TEXT NOT NULL,
	tool TEXT NOT NULL DEFAULT '',
	match_type TEXT NOT NULL DEFAULT '',   -- '', glob, regex
	pattern TEXT NOT NULL DEFAULT '',
	enabled BIGINT NOT NULL DEFAULT 1,
	source_approval_id TEXT,               -- "approve and remember" made it
	created_by TEXT,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX rules_scope ON rules(org_id, project_id, created_at);

-- Spending caps of an org (project_id NULL) or a project; NULL: no cap.
CREATE TABLE budgets (
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	project_id TEXT REFERENCES projects(id) ON DELETE CASCADE,
	daily_cost_usd DOUBLE PRECISION,
	monthly_cost_usd DOUBLE PRECISION,
	session_tokens BIGINT,
	updated_by TEXT,
	updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX budgets_scope ON budgets(org_id, COALESCE(project_id, ''));

-- A monitoring system a project's agent may query. The credential is a
-- project (or org) secret named by auth_secret, never stored here.
CREATE TABLE integrations (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
	kind TEXT NOT NULL,                    -- prometheus, alertmanager, grafana, loki
	name TEXT NOT NULL,
	base_url TEXT NOT NULL,
	auth_scheme TEXT NOT NULL DEFAULT 'none', -- none, bearer, basic
	auth_secret TEXT NOT NULL DEFAULT '',
	org_header TEXT NOT NULL DEFAULT '',   -- X-Scope-OrgID (Loki, Mimir) or X-Grafana-Org-Id
	enabled BIGINT NOT NULL DEFAULT 1,
	created_by TEXT,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX integrations_name ON integrations(org_id, project_id, name);

-- Private addresses a project's http_request may reach (CIDRs or host
-- names); everything private is refused otherwise.
CREATE TABLE http_allowlists (
	project_id TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	entries TEXT NOT NULL DEFAULT '[]',
	updated_by TEXT,
	updated_at TEXT NOT NULL
);
