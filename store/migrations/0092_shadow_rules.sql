-- Shadow rules: a proposed must_always / must_never rule on trial. It
-- decides nothing (it lives apart from the rules table, so no enforcement
-- path can read it); the gate records, for every call, what it would have
-- decided when that differs from what the live rules decided.
CREATE TABLE shadow_rules (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
	kind TEXT NOT NULL,
	effect TEXT NOT NULL,
	description TEXT NOT NULL,
	tool TEXT NOT NULL DEFAULT '',
	match_type TEXT NOT NULL DEFAULT '',
	pattern TEXT NOT NULL DEFAULT '',
	allow_opaque INTEGER NOT NULL DEFAULT 0,
	trial_until TEXT NOT NULL,        -- records until then; promote or delete it after
	hits INTEGER NOT NULL DEFAULT 0,
	created_by TEXT,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX shadow_rules_project ON shadow_rules(project_id, trial_until);

-- What a shadow rule would have done to one call.
CREATE TABLE shadow_rule_hits (
	id TEXT PRIMARY KEY,
	rule_id TEXT NOT NULL REFERENCES shadow_rules(id) ON DELETE CASCADE,
	session_id TEXT,
	at TEXT NOT NULL,
	tool TEXT NOT NULL,
	command TEXT NOT NULL,            -- the rendered call, secrets as the runner saw them masked
	actual TEXT NOT NULL,             -- allow, block, need_approval: what the live rules decided
	would TEXT NOT NULL               -- what live rules plus this rule would have decided
);
CREATE INDEX shadow_rule_hits_rule ON shadow_rule_hits(rule_id, at);
