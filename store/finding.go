package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Finding statuses.
const (
	FindingReported  = "reported"
	FindingNoFinding = "no_finding"
)

// Finding is one investigation's conclusion on an incident. Body is the
// JSON of its structure (hypotheses, impact, next steps, dropped refs and
// unresolved targets), which package investigate defines and checks.
type Finding struct {
	ID            string
	OrgID         string
	ProjectID     string
	IncidentID    string
	SessionID     string
	Status        string
	Summary       string
	Body          string
	FinalText     string
	Model         string
	PromptVersion string
	CreatedAt     time.Time
}

const findingCols = `id, org_id, project_id, incident_id, session_id, status, summary, body, final_text, model, prompt_version, created_at`

func scanFinding(row rowScanner) (*Finding, error) {
	var f Finding
	var created string
	err := row.Scan(&f.ID, &f.OrgID, &f.ProjectID, &f.IncidentID, &f.SessionID, &f.Status, &f.Summary, &f.Body, &f.FinalText, &f.Model, &f.PromptVersion, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("finding")
	}
	if err != nil {
		return nil, err
	}
	f.CreatedAt = ParseTS(created)
	return &f, nil
}

// AddFinding appends a finding to its incident's history (a finding is
// never overwritten) and notes it on the incident's timeline.
func (db *DB) AddFinding(ctx context.Context, f *Finding) error {
	return db.Write(ctx, func(tx *Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM incidents WHERE id = ? AND org_id = ? AND project_id = ?`, f.IncidentID, f.OrgID, f.ProjectID).Scan(&one); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return NotFound("incident")
			}
			return err
		}
		f.ID, f.CreatedAt = NewID(), tx.Now
		if f.Body == "" {
			f.Body = "{}"
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO incident_findings (`+findingCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`,
			f.ID, f.OrgID, f.ProjectID, f.IncidentID, f.SessionID, f.Status, f.Summary, f.Body, f.FinalText, f.Model, f.PromptVersion, TS(f.CreatedAt)); err != nil {
			return err
		}
		text := "finding: " + f.Summary
		if f.Status == FindingNoFinding {
			text = "no finding: the investigation ended without reporting one"
		}
		return addTimelineTx(ctx, tx, f.IncidentID, "finding", "", text, `{"finding_id":"`+f.ID+`"}`)
	})
}

// FindFindings returns a page of an incident's findings, newest first.
func (db *DB) FindFindings(ctx context.Context, orgID, projectID, incidentID string, limit, offset int) ([]Finding, int, error) {
	q := scopedList(orgID, projectID).eq("incident_id", incidentID)
	return listPage(ctx, db, "incident_findings", findingCols, q, "created_at DESC, id DESC", nil, limit, offset, scanFinding)
}

// FindFinding returns one finding of an incident.
func (db *DB) FindFinding(ctx context.Context, orgID, projectID, incidentID, id string) (*Finding, error) {
	return scanFinding(db.r.QueryRowContext(ctx, `SELECT `+findingCols+` FROM incident_findings WHERE id = ? AND incident_id = ? AND org_id = ? AND project_id = ?`,
		id, incidentID, orgID, projectID))
}

// LatestFinding returns an incident's newest finding (not found when none).
func (db *DB) LatestFinding(ctx context.Context, orgID, projectID, incidentID string) (*Finding, error) {
	return scanFinding(db.r.QueryRowContext(ctx, `SELECT `+findingCols+` FROM incident_findings WHERE incident_id = ? AND org_id = ? AND project_id = ?
		ORDER BY created_at DESC, id DESC LIMIT 1`, incidentID, orgID, projectID))
}

// SessionHasFinding reports whether a session already recorded a finding
// (reported or no_finding).
func (db *DB) SessionHasFinding(ctx context.Context, sessionID string) (bool, error) {
	var n int
	err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM incident_findings WHERE session_id = ?`, sessionID).Scan(&n)
	return n > 0, err
}

// UpdateFindingBody replaces a finding's structure (a next step's approval
// id and result); then runs inside the transaction on the row read, and
// returns the new body.
func (db *DB) UpdateFindingBody(ctx context.Context, orgID, projectID, id string, then func(f *Finding) (string, error)) (*Finding, error) {
	var out *Finding
	err := db.Write(ctx, func(tx *Tx) error {
		f, err := scanFinding(tx.QueryRowContext(ctx, `SELECT `+findingCols+` FROM incident_findings WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID))
		if err != nil {
			return err
		}
		body, err := then(f)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE incident_findings SET body = ? WHERE id = ?`, body, id); err != nil {
			return err
		}
		f.Body, out = body, f
		return nil
	})
	return out, err
}

// IncidentBySession returns the incident a session investigates: the one
// whose run it is (incidents.session_id), or the one it was started for
// (session_prompts.incident_id).
func (db *DB) IncidentBySession(ctx context.Context, orgID, projectID, sessionID string) (*Incident, error) {
	inc, err := scanIncident(db.r.QueryRowContext(ctx, `SELECT `+incidentCols+` FROM incidents WHERE session_id = ? AND org_id = ? AND project_id = ?`,
		sessionID, orgID, projectID))
	if !IsNotFound(err) {
		return inc, err
	}
	var id string
	if err := db.r.QueryRowContext(ctx, `SELECT incident_id FROM session_prompts WHERE session_id = ?`, sessionID).Scan(&id); err != nil || id == "" {
		return nil, NotFound("incident")
	}
	return scanIncident(db.r.QueryRowContext(ctx, `SELECT `+incidentCols+` FROM incidents WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID))
}

// SetSessionPrompt records the prompt version a session runs with (the
// first turn's; later turns keep it) and the incident it investigates.
func (db *DB) SetSessionPrompt(ctx context.Context, sessionID, version, incidentID string) error {
	return db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO session_prompts (session_id, prompt_version, incident_id, created_at) VALUES (?,?,?,?)
			ON CONFLICT (session_id) DO UPDATE SET prompt_version = excluded.prompt_version,
			incident_id = CASE WHEN excluded.incident_id = '' THEN session_prompts.incident_id ELSE excluded.incident_id END`,
			sessionID, version, incidentID, TS(tx.Now))
		return err
	})
}

// SessionPrompt returns a session's prompt version ("" when none was recorded).
func (db *DB) SessionPrompt(ctx context.Context, sessionID string) (string, error) {
	var v string
	err := db.r.QueryRowContext(ctx, `SELECT prompt_version FROM session_prompts WHERE session_id = ?`, sessionID).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// CachedEvidence returns an incident's evidence pack gathered after
// since, "" when none.
func (db *DB) CachedEvidence(ctx context.Context, orgID, projectID, incidentID string, since time.Time) (string, error) {
	var pack string
	err := db.r.QueryRowContext(ctx, `SELECT pack FROM incident_evidence WHERE incident_id = ? AND org_id = ? AND project_id = ? AND gathered_at >= ?`,
		incidentID, orgID, projectID, TS(since)).Scan(&pack)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return pack, err
}

// LatestEvidence returns an incident's cached pack, whenever gathered.
func (db *DB) LatestEvidence(ctx context.Context, orgID, projectID, incidentID string) (string, error) {
	pack, err := db.CachedEvidence(ctx, orgID, projectID, incidentID, time.Time{})
	if err == nil && pack == "" {
		return "", NotFound("evidence pack")
	}
	return pack, err
}

// PutEvidence caches an incident's pack.
func (db *DB) PutEvidence(ctx context.Context, orgID, projectID, incidentID, pack string) error {
	return db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO incident_evidence (incident_id, org_id, project_id, pack, gathered_at) VALUES (?,?,?,?,?)
			ON CONFLICT (incident_id) DO UPDATE SET pack = excluded.pack, gathered_at = excluded.gathered_at`,
			incidentID, orgID, projectID, pack, TS(tx.Now))
		return err
	})
}

// AgentSettings are a project's own additions to the agent.
type AgentSettings struct {
	Instructions         string
	EvidenceBudgetTokens int // 0: the default
	UpdatedBy            string
	UpdatedAt            *time.Time
}

// ProjectAgentSettings returns a project's settings (zero when none were set).
func (db *DB) ProjectAgentSettings(ctx context.Context, orgID, projectID string) (*AgentSettings, error) {
	var a AgentSettings
	var at string
	var by sql.NullString
	err := db.r.QueryRowContext(ctx, `SELECT instructions, evidence_budget_tokens, updated_at, updated_by FROM project_agent_settings WHERE project_id = ? AND org_id = ?`,
		projectID, orgID).Scan(&a.Instructions, &a.EvidenceBudgetTokens, &at, &by)
	if errors.Is(err, sql.ErrNoRows) {
		return &a, nil
	}
	if err != nil {
		return nil, err
	}
	t := ParseTS(at)
	a.UpdatedAt, a.UpdatedBy = &t, by.String
	return &a, nil
}

// ProjectInstructions returns a project's own instructions to the agent.
func (db *DB) ProjectInstructions(ctx context.Context, orgID, projectID string) (string, error) {
	a, err := db.ProjectAgentSettings(ctx, orgID, projectID)
	if err != nil {
		return "", err
	}
	return a.Instructions, nil
}

// PutProjectAgentSettings replaces a project's settings.
func (db *DB) PutProjectAgentSettings(ctx context.Context, orgID, projectID string, a *AgentSettings) error {
	return db.Write(ctx, func(tx *Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM projects WHERE id = ? AND org_id = ?`, projectID, orgID).Scan(&one); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return NotFound("project")
			}
			return err
		}
		now := tx.Now
		a.UpdatedAt = &now
		_, err := tx.ExecContext(ctx, `INSERT INTO project_agent_settings (project_id, org_id, instructions, evidence_budget_tokens, updated_by, updated_at) VALUES (?,?,?,?,?,?)
			ON CONFLICT (project_id) DO UPDATE SET instructions = excluded.instructions, evidence_budget_tokens = excluded.evidence_budget_tokens,
			updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
			projectID, orgID, a.Instructions, a.EvidenceBudgetTokens, nullStr(a.UpdatedBy), TS(now))
		return err
	})
}

// LinkNextStepApproval records that an approval is a finding's next step.
func (db *DB) LinkNextStepApproval(ctx context.Context, approvalID, orgID, projectID, findingID string, step int) error {
	return db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO finding_step_approvals (approval_id, org_id, project_id, finding_id, step) VALUES (?,?,?,?,?)`,
			approvalID, orgID, projectID, findingID, step)
		return err
	})
}

// NextStepOfApproval returns the finding and step an approval runs (not
// found for other approvals).
func (db *DB) NextStepOfApproval(ctx context.Context, approvalID string) (string, int, error) {
	var fid string
	var step int
	err := db.r.QueryRowContext(ctx, `SELECT finding_id, step FROM finding_step_approvals WHERE approval_id = ?`, approvalID).Scan(&fid, &step)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, NotFound("next step")
	}
	return fid, step, err
}
