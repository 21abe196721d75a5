package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Heartbeat check statuses.
const (
	HeartbeatNew     = "new"     // created, no ping yet (still expected by its first deadline)
	HeartbeatUp      = "up"      // the last ping was a success in time
	HeartbeatStarted = "started" // a start ping is waiting for its finish
	HeartbeatDown    = "down"    // missed or failed; its incident is open until a success ping
)

// Ping kinds.
const (
	PingSuccess = "success"
	PingFail    = "fail"
	PingStart   = "start"
)

// HeartbeatCheck is a dead-man's switch: something outside pings it on a
// schedule; a missing or failed ping is a miss.
type HeartbeatCheck struct {
	ID             string
	OrgID          string
	ProjectID      string
	Name           string
	TokenHash      string
	BadgeToken     string
	Schedule       string // cron ('' when Period is used)
	Timezone       string
	Period         time.Duration
	Grace          time.Duration
	TaskID         string
	Enabled        bool
	Status         string
	LastPingAt     *time.Time
	LastPingKind   string
	StartedAt      *time.Time
	LastDurationMS *int64
	DueAt          time.Time
	DeadlineAt     time.Time
	Misses         int
	IncidentID     string
	CreatedBy      string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// HeartbeatPatch edits a check; nil fields stay.
type HeartbeatPatch struct {
	Name     *string
	Schedule *string
	Timezone *string
	Period   *time.Duration
	Grace    *time.Duration
	TaskID   *string
	Enabled  *bool
}

// HeartbeatPing is one recorded ping.
type HeartbeatPing struct {
	ID         string
	At         time.Time
	Kind       string
	DurationMS *int64
	Miss       int
}

// HeartbeatOutcome is what a ping or a sweep did besides recording itself.
type HeartbeatOutcome struct {
	Check      *HeartbeatCheck
	OpenedID   string    // incident opened for a miss
	SessionID  string    // run started for a miss
	Resolved   *Incident // incident closed by a success ping after a miss
	Duplicate  bool      // the check was already down: nothing new opened
	NewMissKey string
}

// NextDue computes when a check expects its next ping after t (the server
// knows cron; the store only stores the answer).
type NextDue func(c *HeartbeatCheck, after time.Time) time.Time

const heartbeatCols = `id, org_id, project_id, name, token_hash, badge_token, schedule, timezone, period_seconds, grace_seconds,
	task_id, enabled, status, last_ping_at, last_ping_kind, started_at, last_duration_ms, due_at, deadline_at, misses, incident_id,
	created_by, created_at, updated_at`

func scanHeartbeat(row rowScanner) (*HeartbeatCheck, error) {
	var c HeartbeatCheck
	var period, grace int64
	var task, lastPing, started, inc, by sql.NullString
	var dur sql.NullInt64
	var due, deadline, created, updated string
	err := row.Scan(&c.ID, &c.OrgID, &c.ProjectID, &c.Name, &c.TokenHash, &c.BadgeToken, &c.Schedule, &c.Timezone, &period, &grace,
		&task, &c.Enabled, &c.Status, &lastPing, &c.LastPingKind, &started, &dur, &due, &deadline, &c.Misses, &inc, &by, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("heartbeat check")
	}
	if err != nil {
		return nil, err
	}
	c.Period, c.Grace = time.Duration(period)*time.Second, time.Duration(grace)*time.Second
	c.TaskID, c.IncidentID, c.CreatedBy = task.String, inc.String, by.String
	c.LastPingAt, c.StartedAt = scanNullTS(lastPing), scanNullTS(started)
	if dur.Valid {
		c.LastDurationMS = &dur.Int64
	}
	c.DueAt, c.DeadlineAt, c.CreatedAt, c.UpdatedAt = ParseTS(due), ParseTS(deadline), ParseTS(created), ParseTS(updated)
	return &c, nil
}

// MaxHeartbeatsPerProject caps a project's checks; HeartbeatPingsKept is
// how many of a check's latest pings are kept.
const (
	MaxHeartbeatsPerProject = 500
	HeartbeatPingsKept      = 200
)

// CreateHeartbeat stores a new check; DueAt and DeadlineAt are set by the caller.
func (db *DB) CreateHeartbeat(ctx context.Context, c *HeartbeatCheck) error {
	return db.Write(ctx, func(tx *Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM heartbeat_checks WHERE project_id = ?`, c.ProjectID).Scan(&n); err != nil {
			return err
		}
		if n >= MaxHeartbeatsPerProject {
			return &Error{Code: EConflict, Message: "too many heartbeat checks in this project", Reason: "heartbeat_limit"}
		}
		if c.TaskID != "" {
			if _, err := findTask(ctx, tx, c.OrgID, c.ProjectID, c.TaskID); err != nil {
				return &Error{Code: EInvalid, Message: "task_id: no such task in this project", Reason: "task_not_found"}
			}
		}
		c.ID, c.CreatedAt, c.UpdatedAt, c.Status = NewID(), tx.Now, tx.Now, HeartbeatNew
		_, err := tx.ExecContext(ctx, `INSERT INTO heartbeat_checks (`+heartbeatCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			c.ID, c.OrgID, c.ProjectID, c.Name, c.TokenHash, c.BadgeToken, c.Schedule, c.Timezone, int64(c.Period/time.Second),
			int64(c.Grace/time.Second), nullStr(c.TaskID), c.Enabled, c.Status, nil, "", nil, nil, TS(c.DueAt), TS(c.DeadlineAt), 0, nil,
			nullStr(c.CreatedBy), TS(c.CreatedAt), TS(c.UpdatedAt))
		return err
	})
}

// FindHeartbeats lists a project's checks, oldest first.
func (db *DB) FindHeartbeats(ctx context.Context, orgID, projectID string) ([]HeartbeatCheck, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+heartbeatCols+` FROM heartbeat_checks WHERE org_id = ? AND project_id = ? ORDER BY created_at`, orgID, projectID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return collectRows(rows, scanHeartbeat)
}

// FindHeartbeat reads one check of a project.
func (db *DB) FindHeartbeat(ctx context.Context, orgID, projectID, id string) (*HeartbeatCheck, error) {
	return scanHeartbeat(db.r.QueryRowContext(ctx, `SELECT `+heartbeatCols+` FROM heartbeat_checks WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID))
}

// FindHeartbeatByBadge reads the check of a public badge token.
func (db *DB) FindHeartbeatByBadge(ctx context.Context, token string) (*HeartbeatCheck, error) {
	return scanHeartbeat(db.r.QueryRowContext(ctx, `SELECT `+heartbeatCols+` FROM heartbeat_checks WHERE badge_token = ?`, token))
}

// UpdateHeartbeat edits a check; recompute sets its due and deadline from
// the new schedule (and may refuse it).
func (db *DB) UpdateHeartbeat(ctx context.Context, orgID, projectID, id string, p HeartbeatPatch, recompute func(*HeartbeatCheck) error) (*HeartbeatCheck, error) {
	var out *HeartbeatCheck
	err := db.Write(ctx, func(tx *Tx) error {
		c, err := scanHeartbeat(tx.QueryRowContext(ctx, `SELECT `+heartbeatCols+` FROM heartbeat_checks WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID))
		if err != nil {
			return err
		}
		setIf(&c.Name, p.Name)
		setIf(&c.Schedule, p.Schedule)
		setIf(&c.Timezone, p.Timezone)
		setIf(&c.TaskID, p.TaskID)
		setIf(&c.Period, p.Period)
		setIf(&c.Grace, p.Grace)
		setIf(&c.Enabled, p.Enabled)
		if p.TaskID != nil && c.TaskID != "" {
			if _, err := findTask(ctx, tx, orgID, projectID, c.TaskID); err != nil {
				return &Error{Code: EInvalid, Message: "task_id: no such task in this project", Reason: "task_not_found"}
			}
		}
		if err := recompute(c); err != nil {
			return err
		}
		c.UpdatedAt = tx.Now
		_, err = tx.ExecContext(ctx, `UPDATE heartbeat_checks SET name = ?, schedule = ?, timezone = ?, period_seconds = ?, grace_seconds = ?,
			task_id = ?, enabled = ?, due_at = ?, deadline_at = ?, updated_at = ? WHERE id = ?`, c.Name, c.Schedule, c.Timezone,
			int64(c.Period/time.Second), int64(c.Grace/time.Second), nullStr(c.TaskID), c.Enabled, TS(c.DueAt), TS(c.DeadlineAt), TS(c.UpdatedAt), c.ID)
		out = c
		return err
	})
	return out, err
}

// DeleteHeartbeat removes a check and its pings.
func (db *DB) DeleteHeartbeat(ctx context.Context, orgID, projectID, id string) error {
	return db.Write(ctx, func(tx *Tx) error {
		return execOne(ctx, tx, "heartbeat check", `DELETE FROM heartbeat_checks WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID)
	})
}

// FindHeartbeatPings lists a check's latest pings, newest first. The caller
// has checked the check belongs to the tenant.
func (db *DB) FindHeartbeatPings(ctx context.Context, checkID string, limit int) ([]HeartbeatPing, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, at, kind, duration_ms, miss FROM heartbeat_pings WHERE check_id = ? ORDER BY at DESC, id DESC LIMIT ?`, checkID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return collectRows(rows, func(r rowScanner) (*HeartbeatPing, error) {
		var p HeartbeatPing
		var at string
		var dur sql.NullInt64
		if err := r.Scan(&p.ID, &at, &p.Kind, &dur, &p.Miss); err != nil {
			return nil, err
		}
		p.At = ParseTS(at)
		if dur.Valid {
			p.DurationMS = &dur.Int64
		}
		return &p, nil
	})
}

// RecordHeartbeatPing records a ping of the check whose secret hashes to
// tokenHash and moves the check in the same transaction: success makes it
// up (closing the incident of a miss), fail makes it down (opening one,
// once), start waits for the finish within the grace time.
func (db *DB) RecordHeartbeatPing(ctx context.Context, tokenHash, kind string, next NextDue) (*HeartbeatOutcome, error) {
	var out *HeartbeatOutcome
	err := db.Write(ctx, func(tx *Tx) error {
		c, err := scanHeartbeat(tx.QueryRowContext(ctx, `SELECT `+heartbeatCols+` FROM heartbeat_checks WHERE token_hash = ?`, tokenHash))
		if err != nil {
			return err
		}
		o := &HeartbeatOutcome{Check: c}
		now := tx.Now
		var dur *int64
		if kind != PingStart && c.StartedAt != nil {
			ms := now.Sub(*c.StartedAt).Milliseconds()
			dur = &ms
		}
		miss := 0
		switch kind {
		case PingStart:
			c.StartedAt = &now
			if c.Status != HeartbeatDown { // a down check stays down until a success
				c.Status, c.DeadlineAt = HeartbeatStarted, now.Add(c.Grace)
			}
		case PingSuccess:
			if c.Status == HeartbeatDown && c.IncidentID != "" {
				if o.Resolved, err = resolveHeartbeatIncidentTx(ctx, tx, c); err != nil {
					return err
				}
			}
			c.Status, c.StartedAt, c.IncidentID = HeartbeatUp, nil, ""
			c.DueAt = next(c, now)
			c.DeadlineAt = c.DueAt.Add(c.Grace)
		case PingFail:
			c.StartedAt = nil
			c.DueAt = next(c, now)
			c.DeadlineAt = c.DueAt.Add(c.Grace)
			if c.Status == HeartbeatDown {
				o.Duplicate = true
				if c.IncidentID != "" {
					if err := addTimelineTx(ctx, tx, c.IncidentID, "alert", "", "another fail ping from "+c.Name, ""); err != nil {
						return err
					}
				}
			} else {
				if err := openMissTx(ctx, tx, c, o, "reported a failure (fail ping)"); err != nil {
					return err
				}
				miss = c.Misses
			}
		default:
			return fmt.Errorf("unknown ping kind %q", kind)
		}
		if dur != nil {
			c.LastDurationMS = dur
		}
		c.LastPingAt, c.LastPingKind, c.UpdatedAt = &now, kind, now
		if _, err := tx.ExecContext(ctx, `INSERT INTO heartbeat_pings (id, check_id, at, kind, duration_ms, miss) VALUES (?,?,?,?,?,?)`,
			NewID(), c.ID, TS(now), kind, dur, miss); err != nil {
			return err
		}
		// Only the latest pings are kept: a job pinging every minute would
		// otherwise add half a million rows a year.
		if _, err := tx.ExecContext(ctx, `DELETE FROM heartbeat_pings WHERE check_id = ? AND at < (SELECT at FROM heartbeat_pings
			WHERE check_id = ? ORDER BY at DESC LIMIT 1 OFFSET ?)`, c.ID, c.ID, HeartbeatPingsKept-1); err != nil {
			return err
		}
		if err := saveHeartbeatStateTx(ctx, tx, c); err != nil {
			return err
		}
		out = o
		return nil
	})
	return out, err
}

func saveHeartbeatStateTx(ctx context.Context, tx *Tx, c *HeartbeatCheck) error {
	var dur any
	if c.LastDurationMS != nil {
		dur = *c.LastDurationMS
	}
	_, err := tx.ExecContext(ctx, `UPDATE heartbeat_checks SET status = ?, last_ping_at = ?, last_ping_kind = ?, started_at = ?,
		last_duration_ms = ?, due_at = ?, deadline_at = ?, misses = ?, incident_id = ?, updated_at = ? WHERE id = ?`,
		c.Status, nullTS(c.LastPingAt), c.LastPingKind, nullTS(c.StartedAt), dur, TS(c.DueAt), TS(c.DeadlineAt), c.Misses,
		nullStr(c.IncidentID), TS(c.UpdatedAt), c.ID)
	return err
}

// SweepHeartbeats turns every enabled check whose deadline has passed
// into a miss: down, an incident, and the check's task run. Each check
// moves in its own guarded transaction, so a crash between two leaves the
// first recorded exactly once and the second still due.
func (db *DB) SweepHeartbeats(ctx context.Context, limit int) ([]HeartbeatOutcome, error) {
	ids, err := queryStrings(ctx, db.r, `SELECT id FROM heartbeat_checks WHERE status != 'down' AND enabled = 1 AND deadline_at <= ?
		ORDER BY deadline_at LIMIT ?`, TS(db.Now()), limit)
	if err != nil {
		return nil, err
	}
	var out []HeartbeatOutcome
	for _, id := range ids {
		var o *HeartbeatOutcome
		err := db.Write(ctx, func(tx *Tx) error {
			o = nil
			c, err := scanHeartbeat(tx.QueryRowContext(ctx, `SELECT `+heartbeatCols+` FROM heartbeat_checks WHERE id = ?`, id))
			if IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			// Re-checked inside the transaction: a ping or another sweep may have moved it.
			if c.Status == HeartbeatDown || !c.Enabled || c.DeadlineAt.After(tx.Now) {
				return nil
			}
			o = &HeartbeatOutcome{Check: c}
			why := "missed its expected ping (due " + TS(c.DueAt) + ", grace " + c.Grace.String() + ")"
			if c.Status == HeartbeatStarted {
				why = "started but did not finish within the grace time " + c.Grace.String()
			}
			if err := openMissTx(ctx, tx, c, o, why); err != nil {
				return err
			}
			c.UpdatedAt = tx.Now
			return saveHeartbeatStateTx(ctx, tx, c)
		})
		if err != nil {
			return out, err
		}
		if o != nil {
			out = append(out, *o)
		}
	}
	return out, nil
}

// openMissTx marks the check down and opens the miss's incident and run.
// The run's key carries the miss number, so a repeated transaction never
// starts a second run for the same miss.
func openMissTx(ctx context.Context, tx *Tx, c *HeartbeatCheck, o *HeartbeatOutcome, why string) error {
	c.Misses++
	c.Status = HeartbeatDown
	now := tx.Now
	inc := &Incident{ID: NewID(), OrgID: c.OrgID, ProjectID: c.ProjectID, Provider: "heartbeat", Title: "Heartbeat check " + c.Name + " " + why,
		Severity: "error", Status: IncidentTriggered, AlertCount: 1, EventCount: 1, OpenedAt: now, LastAlertAt: now, CreatedAt: now, UpdatedAt: now}
	if _, err := tx.ExecContext(ctx, `INSERT INTO incidents (id, org_id, project_id, task_id, provider, title, severity, status, alert_count,
		event_count, session_id, opened_at, last_alert_at, summary, created_at, updated_at) VALUES (?,?,?,NULL,?,?,?,?,?,?,NULL,?,?,'',?,?)`,
		inc.ID, inc.OrgID, inc.ProjectID, inc.Provider, inc.Title, inc.Severity, inc.Status, inc.AlertCount, inc.EventCount,
		TS(now), TS(now), TS(now), TS(now)); err != nil {
		return err
	}
	data := fmt.Sprintf(`{"heartbeat_check_id":%q,"miss":%d}`, c.ID, c.Misses)
	if err := addTimelineTx(ctx, tx, inc.ID, "alert", "", "heartbeat check "+c.Name+" "+why, data); err != nil {
		return err
	}
	c.IncidentID, o.OpenedID = inc.ID, inc.ID
	o.NewMissKey = fmt.Sprintf("heartbeat:%s:%d", c.ID, c.Misses)
	if c.TaskID == "" {
		return nil
	}
	task, err := findTask(ctx, tx, c.OrgID, c.ProjectID, c.TaskID)
	if IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	input := "Heartbeat check " + c.Name + " " + why + ". Incident " + inc.ID + "."
	s, err := RecordWebhookRunTx(ctx, tx, task, o.NewMissKey, input, "")
	if err != nil {
		return err
	}
	o.SessionID = s.ID
	if _, err := tx.ExecContext(ctx, `UPDATE incidents SET session_id = ? WHERE id = ?`, s.ID, inc.ID); err != nil {
		return err
	}
	return addTimelineTx(ctx, tx, inc.ID, "session", "", "agent run of "+task.Name, `{"session_id":"`+s.ID+`"}`)
}

// resolveHeartbeatIncidentTx closes the incident of a miss when the check
// pings again, unless a person already closed it.
func resolveHeartbeatIncidentTx(ctx context.Context, tx *Tx, c *HeartbeatCheck) (*Incident, error) {
	inc, err := scanIncident(tx.QueryRowContext(ctx, `SELECT `+incidentCols+` FROM incidents WHERE id = ? AND project_id = ?`, c.IncidentID, c.ProjectID))
	if IsNotFound(err) || errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if inc.Status == IncidentResolved {
		return nil, nil
	}
	if err := transitionIncidentTx(ctx, tx, inc, IncidentResolved, "", "The heartbeat check "+c.Name+" pinged successfully again."); err != nil {
		return nil, err
	}
	return inc, nil
}
