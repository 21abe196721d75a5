package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Task is a saved piece of agent work: a prompt, an agent type, a schedule
// and the settings its runs obey. It lives in one project of one org.
type Task struct {
	ID               string
	OrgID            string
	ProjectID        string
	Name             string
	Description      string
	Prompt           string
	AgentType        string
	Schedule         string // "" = on demand only
	Timezone         string
	Enabled          bool
	MissedFirePolicy string // skip, run_once
	OverlapPolicy    string // skip, queue
	TimeoutSeconds   int
	MaxSteps         int
	MaxCostUSD       float64
	TemplateID       string
	CreatedBy        string
	LastRunAt        *time.Time
	LastStatus       string
	LastSessionID    string
	LastError        string
	NextRunAt        *time.Time
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// NextRunFunc computes a task's next fire after now (nil: never), and is
// where the caller validates schedule and time zone; the store knows no cron.
type NextRunFunc func(t *Task, now time.Time) (*time.Time, error)

// TaskPatch changes the fields that are set.
type TaskPatch struct {
	Name             *string
	Description      *string
	Prompt           *string
	AgentType        *string
	Schedule         *string
	Timezone         *string
	Enabled          *bool
	MissedFirePolicy *string
	OverlapPolicy    *string
	TimeoutSeconds   *int
	MaxSteps         *int
	MaxCostUSD       *float64
}

// Apply writes the set fields onto t and reports whether the timing changed
// (schedule, zone or enabled), which is when the next fire must be recomputed.
func (p TaskPatch) Apply(t *Task) (retime bool) {
	setS := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	setS(&t.Name, p.Name)
	setS(&t.Description, p.Description)
	setS(&t.Prompt, p.Prompt)
	setS(&t.AgentType, p.AgentType)
	setS(&t.MissedFirePolicy, p.MissedFirePolicy)
	setS(&t.OverlapPolicy, p.OverlapPolicy)
	if p.Schedule != nil && *p.Schedule != t.Schedule {
		t.Schedule, retime = *p.Schedule, true
	}
	if p.Timezone != nil && *p.Timezone != t.Timezone {
		t.Timezone, retime = *p.Timezone, true
	}
	if p.Enabled != nil && *p.Enabled != t.Enabled {
		t.Enabled, retime = *p.Enabled, true
	}
	if p.TimeoutSeconds != nil {
		t.TimeoutSeconds = *p.TimeoutSeconds
	}
	if p.MaxSteps != nil {
		t.MaxSteps = *p.MaxSteps
	}
	if p.MaxCostUSD != nil {
		t.MaxCostUSD = *p.MaxCostUSD
	}
	return retime
}

const taskCols = `id, org_id, project_id, name, description, prompt, agent_type, schedule, timezone, enabled,
	missed_fire_policy, overlap_policy, timeout_seconds, max_steps, max_cost_usd, template_id, created_by,
	last_run_at, last_status, last_session_id, last_error, next_run_at, created_at, updated_at`

func scanTask(row interface{ Scan(...any) error }) (*Task, error) {
	var t Task
	var createdBy, lastRun, lastSession, nextRun sql.NullString
	var created, updated string
	if err := row.Scan(&t.ID, &t.OrgID, &t.ProjectID, &t.Name, &t.Description, &t.Prompt, &t.AgentType, &t.Schedule,
		&t.Timezone, &t.Enabled, &t.MissedFirePolicy, &t.OverlapPolicy, &t.TimeoutSeconds, &t.MaxSteps, &t.MaxCostUSD,
		&t.TemplateID, &createdBy, &lastRun, &t.LastStatus, &lastSession, &t.LastError, &nextRun, &created, &updated); err != nil {
		return nil, err
	}
	t.CreatedBy, t.LastSessionID = createdBy.String, lastSession.String
	t.LastRunAt, t.NextRunAt = scanNullTS(lastRun), scanNullTS(nextRun)
	t.CreatedAt, t.UpdatedAt = ParseTS(created), ParseTS(updated)
	return &t, nil
}

// CreateTask inserts t (OrgID and ProjectID set by the caller from the
// authenticated context), filling ID, times and the next fire.
func (db *DB) CreateTask(ctx context.Context, t *Task, next NextRunFunc) error {
	return db.Write(ctx, func(tx *Tx) error { return createTaskTx(ctx, tx, t, next) })
}

// CreateTasks inserts several tasks in one transaction (all or none).
func (db *DB) CreateTasks(ctx context.Context, ts []*Task, next NextRunFunc) error {
	return db.Write(ctx, func(tx *Tx) error {
		for _, t := range ts {
			if err := createTaskTx(ctx, tx, t, next); err != nil {
				return err
			}
		}
		return nil
	})
}

// createTaskTx is CreateTask inside the caller's transaction.
func createTaskTx(ctx context.Context, tx *Tx, t *Task, next NextRunFunc) error {
	if t.Enabled {
		if err := tx.CheckQuota(ctx, QuotaEnabledTasks, t.OrgID, 1); err != nil {
			return err
		}
	}
	t.ID = NewID()
	t.CreatedAt, t.UpdatedAt = tx.Now, tx.Now
	t.LastRunAt, t.LastStatus, t.LastSessionID, t.LastError = nil, "", "", ""
	var err error
	if t.NextRunAt, err = next(t, tx.Now); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO tasks (`+taskCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		t.ID, t.OrgID, t.ProjectID, t.Name, t.Description, t.Prompt, t.AgentType, t.Schedule, t.Timezone, t.Enabled,
		t.MissedFirePolicy, t.OverlapPolicy, t.TimeoutSeconds, t.MaxSteps, t.MaxCostUSD, t.TemplateID, nullStr(t.CreatedBy),
		nil, "", nil, "", nullTS(t.NextRunAt), TS(t.CreatedAt), TS(t.UpdatedAt))
	return err
}

// FindTaskByID returns the task only if it belongs to the org and project.
func (db *DB) FindTaskByID(ctx context.Context, orgID, projectID, id string) (*Task, error) {
	return findTask(ctx, db.r, orgID, projectID, id)
}

func findTask(ctx context.Context, q Querier, orgID, projectID, id string) (*Task, error) {
	t, err := scanTask(q.QueryRowContext(ctx, `SELECT `+taskCols+` FROM tasks WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("task")
	}
	return t, err
}

// UpdateTask applies patch in one transaction; when the timing changed the
// next fire is recomputed from now, so an edit or a re-enable never replays
// fires from the past and takes effect without a restart.
func (db *DB) UpdateTask(ctx context.Context, orgID, projectID, id string, patch TaskPatch, next NextRunFunc) (*Task, error) {
	var out *Task
	err := db.Write(ctx, func(tx *Tx) error {
		t, err := findTask(ctx, tx, orgID, projectID, id)
		if err != nil {
			return err
		}
		wasEnabled := t.Enabled
		if patch.Apply(t) {
			if t.NextRunAt, err = next(t, tx.Now); err != nil {
				return err
			}
		} else if _, err := next(t, tx.Now); err != nil {
			return err // still validate: an agent type or policy may have changed
		}
		if t.Enabled && !wasEnabled {
			if err := tx.CheckQuota(ctx, QuotaEnabledTasks, orgID, 1); err != nil {
				return err
			}
		}
		t.UpdatedAt = tx.Now
		_, err = tx.ExecContext(ctx, `UPDATE tasks SET name = ?, description = ?, prompt = ?, agent_type = ?, schedule = ?,
			timezone = ?, enabled = ?, missed_fire_policy = ?, overlap_policy = ?, timeout_seconds = ?, max_steps = ?,
			max_cost_usd = ?, next_run_at = ?, updated_at = ? WHERE id = ? AND org_id = ? AND project_id = ?`,
			t.Name, t.Description, t.Prompt, t.AgentType, t.Schedule, t.Timezone, t.Enabled, t.MissedFirePolicy,
			t.OverlapPolicy, t.TimeoutSeconds, t.MaxSteps, t.MaxCostUSD, nullTS(t.NextRunAt), TS(t.UpdatedAt), id, orgID, projectID)
		out = t
		return err
	})
	return out, err
}

// DeleteTask removes a task. Its past runs stay as sessions (history);
// runs still waiting to start are cancelled in the same transaction.
func (db *DB) DeleteTask(ctx context.Context, orgID, projectID, id string) error {
	deleted, _, err := db.DeleteTasks(ctx, orgID, projectID, []string{id})
	if err == nil && len(deleted) == 0 {
		return NotFound("task")
	}
	return err
}

// DeleteTasks deletes the listed tasks of the project and reports which ids
// were deleted and which were not found (absent, malformed or another
// tenant's: indistinguishable, and never touched).
func (db *DB) DeleteTasks(ctx context.Context, orgID, projectID string, ids []string) (deleted, notFound []string, err error) {
	err = db.Write(ctx, func(tx *Tx) error {
		deleted, notFound = nil, nil
		seen := map[string]bool{}
		for _, id := range ids {
			if seen[id] {
				continue
			}
			seen[id] = true
			res, err := tx.ExecContext(ctx, `DELETE FROM tasks WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				notFound = append(notFound, id)
				continue
			}
			deleted = append(deleted, id)
			if _, err := tx.ExecContext(ctx, `UPDATE agent_sessions SET status = ?, reason = 'the task was deleted before the run started',
				ended_at = ?, updated_at = ?, last_activity = ? WHERE task_id = ? AND org_id = ? AND status = ?`,
				SessionCancelled, TS(tx.Now), TS(tx.Now), TS(tx.Now), id, orgID, SessionPending); err != nil {
				return err
			}
		}
		return nil
	})
	return deleted, notFound, err
}

// TaskFilter selects tasks of one project. Sort is one of TaskSorts.
type TaskFilter struct {
	OrgID, ProjectID string
	Search           string // case-insensitive substring of name, description or prompt
	AgentType        string
	Enabled          *bool
	CreatedAfter     *time.Time
	CreatedBefore    *time.Time
	Sort             string
	Limit, Offset    int
}

// TaskSorts maps each public sort value to its ORDER BY; ids break ties so
// pages never overlap. Nulls (never run, not scheduled) sort last.
var TaskSorts = map[string]string{
	"created_desc":  "created_at DESC, id DESC",
	"created_asc":   "created_at ASC, id ASC",
	"name_asc":      "name COLLATE NOCASE ASC, id ASC",
	"name_desc":     "name COLLATE NOCASE DESC, id DESC",
	"updated_desc":  "updated_at DESC, id DESC",
	"next_run_asc":  "next_run_at IS NULL, next_run_at ASC, id ASC",
	"last_run_desc": "last_run_at IS NULL, last_run_at DESC, id DESC",
}

// taskListCols are the task columns without the prompt: lists never show it
// (up to 20 KB each), so FindTasks leaves Task.Prompt empty.
const taskListCols = `id, org_id, project_id, name, description, '', agent_type, schedule, timezone, enabled,
	missed_fire_policy, overlap_policy, timeout_seconds, max_steps, max_cost_usd, template_id, created_by,
	last_run_at, last_status, last_session_id, last_error, next_run_at, created_at, updated_at`

// FindTasks returns one page of tasks (Prompt left empty, see taskListCols)
// and the total matching the filter.
func (db *DB) FindTasks(ctx context.Context, f TaskFilter) ([]Task, int, error) {
	q := scopedList(f.OrgID, f.ProjectID).
		search(f.Search, "lower(name)", "lower(description)", "lower(prompt)").
		eq("agent_type", f.AgentType).
		since("created_at", f.CreatedAfter, f.CreatedBefore)
	if f.Enabled != nil {
		q.and("enabled = ?", *f.Enabled)
	}
	order, ok := TaskSorts[f.Sort]
	if !ok {
		order = TaskSorts["created_desc"]
	}
	return listPage(ctx, db, "tasks", taskListCols, q, order, nil, f.Limit, f.Offset, scanTask)
}
