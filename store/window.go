package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

// Maintenance window modes.
const (
	WindowSuppress = "suppress" // matching alerts are stored, not dispatched
	WindowObserve  = "observe"  // dispatched to a run that may only read
)

// EventSuppressed is the status of a webhook event a maintenance window held back.
const EventSuppressed = "suppressed"

// MaintenanceWindow is a planned quiet period of a project.
type MaintenanceWindow struct {
	ID           string
	OrgID        string
	ProjectID    string
	Name         string
	StartsAt     *time.Time // one-off
	EndsAt       *time.Time
	Schedule     string // recurring: cron of each start
	Timezone     string
	Duration     time.Duration
	MatchSources []string
	MatchLabels  map[string]string
	Mode         string
	Enabled      bool
	CreatedBy    string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// WindowMatch is the window an event fell into, as the dispatcher records it.
type WindowMatch struct {
	ID     string
	Name   string
	Mode   string
	EndsAt time.Time
}

const windowCols = `id, org_id, project_id, name, starts_at, ends_at, schedule, timezone, duration_seconds, match_sources, match_labels,
	mode, enabled, created_by, created_at, updated_at`

func scanWindow(row rowScanner) (*MaintenanceWindow, error) {
	var w MaintenanceWindow
	var starts, ends, by sql.NullString
	var dur int64
	var sources, labels, created, updated string
	err := row.Scan(&w.ID, &w.OrgID, &w.ProjectID, &w.Name, &starts, &ends, &w.Schedule, &w.Timezone, &dur, &sources, &labels,
		&w.Mode, &w.Enabled, &by, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("maintenance window")
	}
	if err != nil {
		return nil, err
	}
	w.StartsAt, w.EndsAt, w.CreatedBy = scanNullTS(starts), scanNullTS(ends), by.String
	w.Duration = time.Duration(dur) * time.Second
	_ = json.Unmarshal([]byte(sources), &w.MatchSources)
	_ = json.Unmarshal([]byte(labels), &w.MatchLabels)
	if w.MatchSources == nil {
		w.MatchSources = []string{}
	}
	if w.MatchLabels == nil {
		w.MatchLabels = map[string]string{}
	}
	w.CreatedAt, w.UpdatedAt = ParseTS(created), ParseTS(updated)
	return &w, nil
}

func windowArgs(w *MaintenanceWindow) []any {
	sources, _ := json.Marshal(w.MatchSources)
	labels, _ := json.Marshal(w.MatchLabels)
	return []any{w.Name, nullTS(w.StartsAt), nullTS(w.EndsAt), w.Schedule, w.Timezone, int64(w.Duration / time.Second),
		string(sources), string(labels), w.Mode, w.Enabled}
}

// MaxWindowsPerProject caps a project's windows: every alert is checked against them.
const MaxWindowsPerProject = 100

// CreateWindow stores a new window.
func (db *DB) CreateWindow(ctx context.Context, w *MaintenanceWindow) error {
	return db.Write(ctx, func(tx *Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM maintenance_windows WHERE project_id = ?`, w.ProjectID).Scan(&n); err != nil {
			return err
		}
		if n >= MaxWindowsPerProject {
			return &Error{Code: EConflict, Message: "too many maintenance windows in this project: delete old ones", Reason: "window_limit"}
		}
		w.ID, w.CreatedAt, w.UpdatedAt = NewID(), tx.Now, tx.Now
		args := append([]any{w.ID, w.OrgID, w.ProjectID}, windowArgs(w)...)
		args = append(args, nullStr(w.CreatedBy), TS(w.CreatedAt), TS(w.UpdatedAt))
		_, err := tx.ExecContext(ctx, `INSERT INTO maintenance_windows (`+windowCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, args...)
		return err
	})
}

// FindWindows lists a project's windows, oldest first.
func (db *DB) FindWindows(ctx context.Context, orgID, projectID string) ([]MaintenanceWindow, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+windowCols+` FROM maintenance_windows WHERE org_id = ? AND project_id = ? ORDER BY created_at`, orgID, projectID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return collectRows(rows, scanWindow)
}

// FindWindow reads one window of a project.
func (db *DB) FindWindow(ctx context.Context, orgID, projectID, id string) (*MaintenanceWindow, error) {
	return scanWindow(db.r.QueryRowContext(ctx, `SELECT `+windowCols+` FROM maintenance_windows WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID))
}

// UpdateWindow applies edit to a window and saves it; edit may refuse.
func (db *DB) UpdateWindow(ctx context.Context, orgID, projectID, id string, edit func(*MaintenanceWindow) error) (*MaintenanceWindow, error) {
	var out *MaintenanceWindow
	err := db.Write(ctx, func(tx *Tx) error {
		w, err := scanWindow(tx.QueryRowContext(ctx, `SELECT `+windowCols+` FROM maintenance_windows WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID))
		if err != nil {
			return err
		}
		if err := edit(w); err != nil {
			return err
		}
		w.UpdatedAt = tx.Now
		args := append(windowArgs(w), TS(w.UpdatedAt), w.ID)
		_, err = tx.ExecContext(ctx, `UPDATE maintenance_windows SET name = ?, starts_at = ?, ends_at = ?, schedule = ?, timezone = ?,
			duration_seconds = ?, match_sources = ?, match_labels = ?, mode = ?, enabled = ?, updated_at = ? WHERE id = ?`, args...)
		out = w
		return err
	})
	return out, err
}

// DeleteWindow removes a window.
func (db *DB) DeleteWindow(ctx context.Context, orgID, projectID, id string) error {
	return db.Write(ctx, func(tx *Tx) error {
		return execOne(ctx, tx, "maintenance window", `DELETE FROM maintenance_windows WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID)
	})
}

// ObserveOnlyWindow names the observe-mode window a session was started
// in ("" when none): the policy lets such a run only read.
func (db *DB) ObserveOnlyWindow(ctx context.Context, sessionID string) (string, error) {
	var id string
	err := db.r.QueryRowContext(ctx, `SELECT window_id FROM observe_only_sessions WHERE session_id = ?`, sessionID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, err
}

// suppressOutcome is the outcome of an event a suppress-mode window holds back:
// stored, nothing started, the window named in its dispatch record.
func suppressOutcome(e *WebhookEvent, w *WindowMatch) DispatchOutcome {
	return DispatchOutcome{EventID: e.ID, Status: EventSuppressed, Items: []DispatchItem{{Kind: "window", ID: w.ID, Status: EventSuppressed,
		Reason: "maintenance window " + quoteName(w.Name) + " (until " + TS(w.EndsAt) + ")"}}}
}

// markObserveOnlyTx records that the runs an event started inside an
// observe-mode window may only read, and names the window on each (nothing
// without such a window).
func markObserveOnlyTx(ctx context.Context, tx *Tx, o *DispatchOutcome, w *WindowMatch) error {
	if w == nil || w.Mode != WindowObserve {
		return nil
	}
	for i := range o.Items {
		it := &o.Items[i]
		if it.Kind != "run" || it.ID == "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO observe_only_sessions (session_id, window_id, created_at) VALUES (?,?,?)`,
			it.ID, w.ID, TS(tx.Now)); err != nil {
			return err
		}
		it.Reason = "observe-only: maintenance window " + quoteName(w.Name)
	}
	o.Items = append(o.Items, DispatchItem{Kind: "window", ID: w.ID, Status: WindowObserve, Reason: "maintenance window " + quoteName(w.Name) + " (until " + TS(w.EndsAt) + ")"})
	return nil
}
