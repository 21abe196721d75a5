package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// TaskStats summarises a project's tasks and their runs since a moment.
type TaskStats struct {
	Total, Enabled, Scheduled int
	// Runs counts runs created since Since, by status.
	Runs                                                    int
	Pending, Running, Completed, Failed, Timeout, Cancelled int
	NextRunAt                                               *time.Time
	NextTaskID, NextTaskName                                string
}

// FindTaskStats counts the project's tasks and the runs created since since.
func (db *DB) FindTaskStats(ctx context.Context, orgID, projectID string, since time.Time) (*TaskStats, error) {
	var st TaskStats
	if err := db.r.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(enabled), 0),
		coalesce(sum(CASE WHEN enabled = 1 AND next_run_at IS NOT NULL THEN 1 ELSE 0 END), 0)
		FROM tasks WHERE org_id = ? AND project_id = ?`, orgID, projectID).Scan(&st.Total, &st.Enabled, &st.Scheduled); err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT status, count(*) FROM agent_sessions
		WHERE org_id = ? AND project_id = ? AND source = ? AND task_id IS NOT NULL AND created_at >= ? GROUP BY status`,
		orgID, projectID, SourceTask, TS(since))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var status string
		var n int
		if err := rows.Scan(&status, &n); err != nil {
			return nil, err
		}
		st.Runs += n
		switch status {
		case SessionPending:
			st.Pending = n
		case SessionRunning:
			st.Running = n
		case SessionCompleted:
			st.Completed = n
		case SessionFailed:
			st.Failed = n
		case SessionTimeout:
			st.Timeout = n
		case SessionCancelled:
			st.Cancelled = n
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var next sql.NullString
	err = db.r.QueryRowContext(ctx, `SELECT id, name, next_run_at FROM tasks
		WHERE org_id = ? AND project_id = ? AND enabled = 1 AND next_run_at IS NOT NULL ORDER BY next_run_at LIMIT 1`,
		orgID, projectID).Scan(&st.NextTaskID, &st.NextTaskName, &next)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	st.NextRunAt = scanNullTS(next)
	return &st, nil
}
