package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Postmortem statuses.
const (
	PostmortemDrafting  = "drafting"
	PostmortemDraft     = "draft"
	PostmortemPublished = "published"
	PostmortemFailed    = "failed"
)

// StalePostmortemDraft is how long a draft may stay "drafting" before it
// counts as abandoned (a process that stopped while writing it).
const StalePostmortemDraft = 5 * time.Minute

// Postmortem is the state of an incident's postmortem document.
type Postmortem struct {
	IncidentID  string
	OrgID       string
	ProjectID   string
	Status      string
	Document    string
	Cited       []string
	Invalid     []string
	Model       string
	Error       string
	PublishedBy string
	PublishedAt *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

const postmortemCols = `incident_id, org_id, project_id, status, document, cited, invalid, model, error, published_by, published_at, created_at, updated_at`

func scanPostmortem(row rowScanner) (*Postmortem, error) {
	var p Postmortem
	var cited, invalid, created, updated string
	var by, at sql.NullString
	err := row.Scan(&p.IncidentID, &p.OrgID, &p.ProjectID, &p.Status, &p.Document, &cited, &invalid, &p.Model, &p.Error, &by, &at, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("postmortem")
	}
	if err != nil {
		return nil, err
	}
	_ = json.Unmarshal([]byte(cited), &p.Cited)
	_ = json.Unmarshal([]byte(invalid), &p.Invalid)
	p.PublishedBy, p.PublishedAt = by.String, scanNullTS(at)
	p.CreatedAt, p.UpdatedAt = ParseTS(created), ParseTS(updated)
	return &p, nil
}

// StartPostmortem records that an incident's draft is being written. It
// answers false when one exists already and is not failed (one draft per
// incident: a person's edits are never overwritten), unless redraft.
func (db *DB) StartPostmortem(ctx context.Context, orgID, projectID, incidentID, document string, redraft bool) (bool, error) {
	started := false
	err := db.Write(ctx, func(tx *Tx) error {
		started = false
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM incidents WHERE id = ? AND org_id = ? AND project_id = ?`, incidentID, orgID, projectID).Scan(&one); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return NotFound("incident")
			}
			return err
		}
		p, err := scanPostmortem(tx.QueryRowContext(ctx, `SELECT `+postmortemCols+` FROM postmortems WHERE incident_id = ?`, incidentID))
		switch {
		case IsNotFound(err):
			_, err = tx.ExecContext(ctx, `INSERT INTO postmortems (incident_id, org_id, project_id, status, document, created_at, updated_at)
				VALUES (?,?,?,?,?,?,?)`, incidentID, orgID, projectID, PostmortemDrafting, document, TS(tx.Now), TS(tx.Now))
			started = err == nil
			return err
		case err != nil:
			return err
		case p.Status == PostmortemDrafting && tx.Now.Sub(p.UpdatedAt) < StalePostmortemDraft:
			return nil // being written
		case p.Status == PostmortemDrafting: // its writer stopped (a crash): start again
		case p.Status == PostmortemPublished:
			if redraft {
				return &Error{Code: EConflict, Message: "the postmortem is published; edit its document instead", Reason: "postmortem_published"}
			}
			return nil
		case p.Status == PostmortemDraft && !redraft:
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE postmortems SET status = ?, error = '', updated_at = ? WHERE incident_id = ?`, PostmortemDrafting, TS(tx.Now), incidentID)
		started = err == nil
		return err
	})
	return started, err
}

// FinishPostmortem records a written draft (or why it failed).
func (db *DB) FinishPostmortem(ctx context.Context, incidentID string, cited, invalid []string, model, failure string) error {
	status := PostmortemDraft
	if failure != "" {
		status = PostmortemFailed
	}
	c, _ := json.Marshal(orNoStrings(cited))
	i, _ := json.Marshal(orNoStrings(invalid))
	return db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE postmortems SET status = ?, cited = ?, invalid = ?, model = ?, error = ?, updated_at = ? WHERE incident_id = ?`,
			status, string(c), string(i), model, failure, TS(tx.Now), incidentID)
		return err
	})
}

func orNoStrings(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// PublishPostmortem marks a draft published by userID.
//
// then runs in the same transaction once the row says published (its ctx
// carries the transaction, WithTx): the server republishes the document
// there, so on a shared database the row and the document change together.
func (db *DB) PublishPostmortem(ctx context.Context, orgID, projectID, incidentID, userID string, then func(ctx context.Context, p *Postmortem) error) (*Postmortem, error) {
	var out *Postmortem
	err := db.Write(ctx, func(tx *Tx) error {
		p, err := scanPostmortem(tx.QueryRowContext(ctx, `SELECT `+postmortemCols+` FROM postmortems WHERE incident_id = ? AND org_id = ? AND project_id = ?`,
			incidentID, orgID, projectID))
		if err != nil {
			return err
		}
		if p.Status != PostmortemDraft {
			return &Error{Code: EConflict, Message: "only a draft can be published; this postmortem is " + p.Status, Reason: "postmortem_" + p.Status}
		}
		now := tx.Now
		p.Status, p.PublishedBy, p.PublishedAt, p.UpdatedAt = PostmortemPublished, userID, &now, now
		_, err = tx.ExecContext(ctx, `UPDATE postmortems SET status = ?, published_by = ?, published_at = ?, updated_at = ? WHERE incident_id = ?`,
			p.Status, nullStr(userID), TS(now), TS(now), incidentID)
		if err != nil {
			return err
		}
		out = p
		return then(WithTx(ctx, tx), p)
	})
	return out, err
}

// FindPostmortem reads an incident's postmortem state.
func (db *DB) FindPostmortem(ctx context.Context, orgID, projectID, incidentID string) (*Postmortem, error) {
	return scanPostmortem(db.r.QueryRowContext(ctx, `SELECT `+postmortemCols+` FROM postmortems WHERE incident_id = ? AND org_id = ? AND project_id = ?`,
		incidentID, orgID, projectID))
}

// FindPostmortems lists a project's postmortems, newest first.
func (db *DB) FindPostmortems(ctx context.Context, orgID, projectID string, limit, offset int) ([]Postmortem, int, error) {
	var total int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM postmortems WHERE org_id = ? AND project_id = ?`, orgID, projectID).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+postmortemCols+` FROM postmortems WHERE org_id = ? AND project_id = ?
		ORDER BY created_at DESC LIMIT ? OFFSET ?`, orgID, projectID, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out, err := collectRows(rows, scanPostmortem)
	return out, total, err
}

// PostmortemTemplate is an org's section headings (nil: none set).
func (db *DB) PostmortemTemplate(ctx context.Context, orgID string) ([]string, error) {
	var raw string
	err := db.r.QueryRowContext(ctx, `SELECT sections FROM postmortem_templates WHERE org_id = ?`, orgID).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	err = json.Unmarshal([]byte(raw), &out)
	return out, err
}

// PutPostmortemTemplate sets an org's section headings.
func (db *DB) PutPostmortemTemplate(ctx context.Context, orgID, userID string, sections []string) error {
	b, _ := json.Marshal(sections)
	return db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO postmortem_templates (org_id, sections, updated_by, updated_at) VALUES (?,?,?,?)
			ON CONFLICT (org_id) DO UPDATE SET sections = excluded.sections, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
			orgID, string(b), nullStr(userID), TS(tx.Now))
		return err
	})
}

// IncidentRecords is everything recorded about one incident, for its
// postmortem's fact sheet.
type IncidentRecords struct {
	Incident  *Incident
	Timeline  []TimelineEntry
	Events    []RecordedAlert
	Sessions  []RecordedSession
	Approvals []RecordedApproval
	People    map[string]string // user id -> email, for actors and deciders
}

// RecordedAlert is a webhook delivery that joined or opened the incident.
type RecordedAlert struct {
	ID, Provider, Type, Alerts string
	At                         time.Time
}

// RecordedSession is an agent run of the incident with its event log.
type RecordedSession struct {
	ID, Status, FirstPrompt, Transcript string
	CreatedAt                           time.Time
	Events                              []SessionEvent
}

// RecordedApproval is an approval of the incident's runs.
type RecordedApproval struct {
	ID, Title, Status, DecidedBy, Comment string
	CreatedAt                             time.Time
	DecidedAt                             *time.Time
}

// Record bounds of a fact sheet.
const (
	recordMaxEvents        = 20
	recordMaxSessions      = 10
	recordMaxSessionEvents = 300
)

// FindIncidentRecords reads an incident's records, all scoped to its org and project.
func (db *DB) FindIncidentRecords(ctx context.Context, orgID, projectID, incidentID string) (*IncidentRecords, error) {
	inc, tl, err := db.FindIncident(ctx, orgID, projectID, incidentID)
	if err != nil {
		return nil, err
	}
	r := &IncidentRecords{Incident: inc, Timeline: tl, People: map[string]string{}}
	rows, err := db.r.QueryContext(ctx, `SELECT id, provider, event_type, alerts, received_at FROM webhook_events
		WHERE org_id = ? AND project_id = ? AND dispatch LIKE ? ORDER BY received_at LIMIT ?`, orgID, projectID, `%"id":"`+incidentID+`"%`, recordMaxEvents)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var a RecordedAlert
		var at string
		if err := rows.Scan(&a.ID, &a.Provider, &a.Type, &a.Alerts, &at); err != nil {
			rows.Close()
			return nil, err
		}
		a.At = ParseTS(at)
		r.Events = append(r.Events, a)
	}
	rows.Close()
	sessions, approvals, actors := []string{}, []string{}, []string{inc.AcknowledgedBy, inc.ResolvedBy}
	if inc.SessionID != "" {
		sessions = append(sessions, inc.SessionID)
	}
	for _, e := range tl {
		var d struct {
			SessionID  string `json:"session_id"`
			ApprovalID string `json:"approval_id"`
		}
		_ = json.Unmarshal([]byte(e.Data), &d)
		if d.SessionID != "" && !contains(sessions, d.SessionID) {
			sessions = append(sessions, d.SessionID)
		}
		if d.ApprovalID != "" {
			approvals = append(approvals, d.ApprovalID)
		}
		actors = append(actors, e.Actor)
	}
	if len(sessions) > recordMaxSessions {
		sessions = sessions[:recordMaxSessions]
	}
	for _, sid := range sessions {
		var s RecordedSession
		var created string
		err := db.r.QueryRowContext(ctx, `SELECT s.id, s.status, s.first_prompt, s.created_at, COALESCE(t.messages, '') FROM agent_sessions s
			LEFT JOIN session_transcripts t ON t.session_id = s.id WHERE s.id = ? AND s.org_id = ? AND s.project_id = ?`, sid, orgID, projectID).
			Scan(&s.ID, &s.Status, &s.FirstPrompt, &created, &s.Transcript)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, err
		}
		s.CreatedAt = ParseTS(created)
		if s.Events, err = db.SessionEventsAfter(ctx, s.ID, 0, recordMaxSessionEvents); err != nil {
			return nil, err
		}
		r.Sessions = append(r.Sessions, s)
	}
	if len(sessions)+len(approvals) > 0 {
		ph := strings.Repeat(",?", len(sessions))
		aph := strings.Repeat(",?", len(approvals))
		args := []any{orgID, projectID, ""}
		for _, s := range sessions {
			args = append(args, s)
		}
		args = append(args, "")
		for _, a := range approvals {
			args = append(args, a)
		}
		rows, err := db.r.QueryContext(ctx, `SELECT id, title, status, COALESCE(decided_by, ''), comment, created_at, decided_at FROM approvals
			WHERE org_id = ? AND project_id = ? AND (session_id IN (?`+ph+`) OR id IN (?`+aph+`)) ORDER BY created_at LIMIT 50`, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var a RecordedApproval
			var created string
			var decided sql.NullString
			if err := rows.Scan(&a.ID, &a.Title, &a.Status, &a.DecidedBy, &a.Comment, &created, &decided); err != nil {
				rows.Close()
				return nil, err
			}
			a.CreatedAt, a.DecidedAt = ParseTS(created), scanNullTS(decided)
			r.Approvals = append(r.Approvals, a)
			actors = append(actors, a.DecidedBy)
		}
		rows.Close()
	}
	for _, id := range actors {
		if id == "" || r.People[id] != "" {
			continue
		}
		var email string
		// Only members of the incident's org are named; anyone else stays an id.
		if err := db.r.QueryRowContext(ctx, `SELECT u.email FROM users u JOIN org_members m ON m.user_id = u.id AND m.org_id = ? WHERE u.id = ?`,
			orgID, id).Scan(&email); err == nil {
			r.People[id] = email
		}
	}
	return r, nil
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
