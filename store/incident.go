package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

// Incident statuses follow PagerDuty's event names.
const (
	IncidentTriggered    = "triggered"
	IncidentAcknowledged = "acknowledged"
	IncidentResolved     = "resolved"
)

// Incident is a set of correlated alerts that costs one investigation.
type Incident struct {
	ID             string
	OrgID          string
	ProjectID      string
	TaskID         string
	Provider       string
	Title          string
	Severity       string
	Status         string
	AlertCount     int
	EventCount     int
	SessionID      string
	OpenedAt       time.Time
	LastAlertAt    time.Time
	AcknowledgedAt *time.Time
	AcknowledgedBy string
	ResolvedAt     *time.Time
	ResolvedBy     string
	Summary        string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// TimelineEntry is one line of an incident's history.
type TimelineEntry struct {
	ID    string
	At    time.Time
	Kind  string // alert, session, approval, note, status
	Actor string
	Text  string
	Data  string // JSON
}

const incidentCols = `id, org_id, project_id, task_id, provider, title, severity, status, alert_count, event_count, session_id,
	opened_at, last_alert_at, acknowledged_at, acknowledged_by, resolved_at, resolved_by, summary, created_at, updated_at`

func scanIncident(row interface{ Scan(...any) error }) (*Incident, error) {
	var i Incident
	var task, session, ackAt, ackBy, resAt, resBy sql.NullString
	var opened, last, created, updated string
	err := row.Scan(&i.ID, &i.OrgID, &i.ProjectID, &task, &i.Provider, &i.Title, &i.Severity, &i.Status, &i.AlertCount,
		&i.EventCount, &session, &opened, &last, &ackAt, &ackBy, &resAt, &resBy, &i.Summary, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("incident")
	}
	if err != nil {
		return nil, err
	}
	i.TaskID, i.SessionID, i.AcknowledgedBy, i.ResolvedBy = task.String, session.String, ackBy.String, resBy.String
	i.AcknowledgedAt, i.ResolvedAt = scanNullTS(ackAt), scanNullTS(resAt)
	i.OpenedAt, i.LastAlertAt, i.CreatedAt, i.UpdatedAt = ParseTS(opened), ParseTS(last), ParseTS(created), ParseTS(updated)
	return &i, nil
}

// FindIncident returns an incident of a project with its timeline.
func (db *DB) FindIncident(ctx context.Context, orgID, projectID, id string) (*Incident, []TimelineEntry, error) {
	var opened sql.NullString
	inc, err := scanIncident(scanAlso{db.r.QueryRowContext(ctx, `SELECT `+incidentCols+`, opened_entry FROM incidents
		WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID), []any{&opened}})
	if err != nil {
		return nil, nil, err
	}
	// The first entry on the incident's row (opened_entry, migration 0158),
	// placed among the rows by (at, id) as the rows' ORDER BY places them.
	var first []TimelineEntry
	var firstAt string
	if opened.Valid {
		firstAt = TS(inc.OpenedAt)
		if first, err = openedEntries(inc, opened.String); err != nil {
			return nil, nil, err
		}
	}
	// LIMIT counts rows, each one entry and its follow-ups (which sort
	// right after it): the first 1000 rows, with the row's entry, hold at
	// least the first 1000 entries.
	rows, err := db.r.QueryContext(ctx, `SELECT id, at, kind, actor, text, data, follow FROM incident_timeline WHERE incident_id = ?
		ORDER BY at, id LIMIT 1000`, id)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	tl := []TimelineEntry{}
	for rows.Next() && len(tl) < 1000 {
		var e TimelineEntry
		var at string
		var actor, follow sql.NullString
		if err := rows.Scan(&e.ID, &at, &e.Kind, &actor, &e.Text, &e.Data, &follow); err != nil {
			return nil, nil, err
		}
		e.At, e.Actor = ParseTS(at), actor.String
		if first != nil && (at > firstAt || at == firstAt && e.ID > first[0].ID) {
			tl, first = append(tl, first...), nil
		}
		tl = append(tl, e)
		if follow.Valid {
			if tl, err = appendFollow(tl, e.At, follow.String); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	tl = append(tl, first...)
	if len(tl) > 1000 {
		tl = tl[:1000]
	}
	return inc, tl, nil
}

// openedEntries is an incident's first entry and its follow-ups, read
// from its opened_entry (webhook_dispatch_flush.go, openedEntry).
func openedEntries(inc *Incident, opened string) ([]TimelineEntry, error) {
	var e struct {
		ID     string
		Data   json.RawMessage
		Follow json.RawMessage
	}
	if err := json.Unmarshal([]byte(opened), &e); err != nil {
		return nil, err
	}
	tl := []TimelineEntry{{ID: e.ID, At: inc.OpenedAt, Kind: "alert", Text: inc.Title, Data: string(e.Data)}}
	if e.Follow == nil {
		return tl, nil
	}
	return appendFollow(tl, inc.OpenedAt, string(e.Follow))
}

// appendFollow appends the entries of a follow list (JSON) at at.
func appendFollow(tl []TimelineEntry, at time.Time, follow string) ([]TimelineEntry, error) {
	var more []struct {
		ID, Kind, Text string
		Data           json.RawMessage
	}
	if err := json.Unmarshal([]byte(follow), &more); err != nil {
		return nil, err
	}
	for _, m := range more {
		tl = append(tl, TimelineEntry{ID: m.ID, At: at, Kind: m.Kind, Text: m.Text, Data: string(m.Data)})
	}
	return tl, nil
}

// IncidentFilter selects incidents of a project.
type IncidentFilter struct {
	OrgID, ProjectID string
	Status           string
	Limit, Offset    int
}

// FindIncidents lists incidents, open ones first, then by latest alert.
func (db *DB) FindIncidents(ctx context.Context, f IncidentFilter) ([]Incident, int, error) {
	q := scopedList(f.OrgID, f.ProjectID).eq("status", f.Status)
	return listPage(ctx, db, "incidents", incidentCols, q, "(status != 'resolved') DESC, last_alert_at DESC, id DESC", nil,
		f.Limit, f.Offset, scanIncident)
}

// addTimelineTx appends an entry to an incident's timeline.
func addTimelineTx(ctx context.Context, tx *Tx, incidentID, kind, actor, text, data string) error {
	_, err := tx.ExecContext(ctx, insertTimeline, NewID(), incidentID, TS(tx.Now), kind, nullStr(actor), text, orJSON(data, "{}"))
	return err
}

const insertTimeline = `INSERT INTO incident_timeline (id, incident_id, at, kind, actor, text, data) VALUES (?,?,?,?,?,?,?)`

// TransitionIncident acknowledges or resolves an incident (to is
// acknowledged or resolved) and records who did it. Acknowledging a
// resolved incident, or resolving twice, is a conflict.
func (db *DB) TransitionIncident(ctx context.Context, orgID, projectID, id, to, userID, summary string) (*Incident, error) {
	var out *Incident
	err := db.Write(ctx, func(tx *Tx) error {
		inc, err := scanIncident(tx.QueryRowContext(ctx, `SELECT `+incidentCols+` FROM incidents WHERE id = ? AND org_id = ? AND project_id = ?`,
			id, orgID, projectID))
		if err != nil {
			return err
		}
		if err := transitionIncidentTx(ctx, tx, inc, to, userID, summary); err != nil {
			return err
		}
		out = inc
		return nil
	})
	return out, err
}

// deleteIncidentKeys drops a resolved incident's correlation keys.
const deleteIncidentKeys = `DELETE FROM incident_keys WHERE project_id = ? AND incident_id = ?`

func transitionIncidentTx(ctx context.Context, tx *Tx, inc *Incident, to, actor, summary string) error {
	if inc.Status == IncidentResolved || inc.Status == to {
		return &Error{Code: EConflict, Message: "incident is already " + inc.Status, Reason: "incident_" + inc.Status}
	}
	now := tx.Now
	inc.Status, inc.UpdatedAt = to, now
	switch to {
	case IncidentAcknowledged:
		inc.AcknowledgedAt, inc.AcknowledgedBy = &now, actor
	case IncidentResolved:
		inc.ResolvedAt, inc.ResolvedBy = &now, actor
		if summary != "" {
			inc.Summary = summary
		}
	}
	_, err := tx.ExecContext(ctx, `UPDATE incidents SET status = ?, acknowledged_at = ?, acknowledged_by = ?, resolved_at = ?,
		resolved_by = ?, summary = ?, updated_at = ? WHERE id = ?`, inc.Status, nullTS(inc.AcknowledgedAt), nullStr(inc.AcknowledgedBy),
		nullTS(inc.ResolvedAt), nullStr(inc.ResolvedBy), inc.Summary, TS(now), inc.ID)
	if err != nil {
		return err
	}
	if to == IncidentResolved {
		// Closed incidents no longer attract alerts: a new storm opens a new one.
		// A seek on incident_keys_incident (migration 0155); the project
		// keeps the delete in the tenant's rows.
		if _, err := tx.ExecContext(ctx, deleteIncidentKeys, inc.ProjectID, inc.ID); err != nil {
			return err
		}
	}
	return addTimelineTx(ctx, tx, inc.ID, "status", actor, to, "")
}

// AnnotateIncident adds a note to an incident's timeline.
func (db *DB) AnnotateIncident(ctx context.Context, orgID, projectID, id, userID, text string) (*TimelineEntry, error) {
	var e *TimelineEntry
	err := db.Write(ctx, func(tx *Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM incidents WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return NotFound("incident")
		}
		if err != nil {
			return err
		}
		e = &TimelineEntry{ID: NewID(), At: tx.Now, Kind: "note", Actor: userID, Text: text, Data: "{}"}
		if _, err := tx.ExecContext(ctx, `INSERT INTO incident_timeline (id, incident_id, at, kind, actor, text, data) VALUES (?,?,?,?,?,?,?)`,
			e.ID, id, TS(e.At), e.Kind, nullStr(userID), text, "{}"); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE incidents SET updated_at = ? WHERE id = ?`, TS(tx.Now), id)
		return err
	})
	return e, err
}
