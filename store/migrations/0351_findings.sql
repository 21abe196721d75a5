-- Investigations (issue 36): the findings of an incident's investigations
-- (a history: a later run adds one and never overwrites one), the evidence
-- pack cached per incident (a storm's later alerts reuse it), the prompt
-- version each session ran with, and a project's own instructions to the
-- agent and evidence budget.
CREATE TABLE incident_findings (
	id TEXT PRIMARY KEY,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
	incident_id TEXT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
	session_id TEXT NOT NULL DEFAULT '',
	status TEXT NOT NULL,                     -- reported, no_finding
	summary TEXT NOT NULL DEFAULT '',
	body TEXT NOT NULL DEFAULT '{}',          -- JSON: hypotheses, impact, next_steps, dropped_refs, unresolved_targets
	final_text TEXT NOT NULL DEFAULT '',
	model TEXT NOT NULL DEFAULT '',
	prompt_version TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL
);
CREATE INDEX incident_findings_incident ON incident_findings(incident_id, created_at);
CREATE INDEX incident_findings_session ON incident_findings(session_id);

CREATE TABLE incident_evidence (
	incident_id TEXT PRIMARY KEY REFERENCES incidents(id) ON DELETE CASCADE,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
	pack TEXT NOT NULL,                       -- JSON of the pack (masked)
	gathered_at TEXT NOT NULL
);

CREATE TABLE session_prompts (
	session_id TEXT PRIMARY KEY REFERENCES agent_sessions(id) ON DELETE CASCADE,
	prompt_version TEXT NOT NULL,
	incident_id TEXT NOT NULL DEFAULT '',     -- the incident the session investigates, when it does
	created_at TEXT NOT NULL
);

CREATE TABLE project_agent_settings (
	project_id TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	instructions TEXT NOT NULL DEFAULT '',    -- shown to the model after the platform's prompt
	evidence_budget_tokens INTEGER NOT NULL DEFAULT 0, -- 0: the default (8000)
	updated_by TEXT,
	updated_at TEXT NOT NULL
);

-- The approval a finding's next step was turned into: approving it runs
-- the step once.
CREATE TABLE finding_step_approvals (
	approval_id TEXT PRIMARY KEY REFERENCES approvals(id) ON DELETE CASCADE,
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
	finding_id TEXT NOT NULL REFERENCES incident_findings(id) ON DELETE CASCADE,
	step INTEGER NOT NULL
);
