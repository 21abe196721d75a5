package store

import (
	"context"
	"time"
)

// ProjectAgentBusy reports whether a project has an agent session running
// or waiting, or one active since since: its work directory is in use.
func (db *DB) ProjectAgentBusy(ctx context.Context, projectID string, since time.Time) (bool, error) {
	var busy bool
	err := db.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM agent_sessions WHERE project_id = ?
		AND (status IN ('pending', 'running') OR last_activity >= ?))`, projectID, TS(since)).Scan(&busy)
	return busy, err
}
