package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

// SandboxProfile is a project's kernel sandbox settings for approved
// commands: the only paths they may write (besides /dev/null and their
// private temp dir). An empty list leaves writes to the host's own
// permissions.
type SandboxProfile struct {
	OrgID      string
	ProjectID  string
	AllowPaths []string
	UpdatedBy  string
	UpdatedAt  time.Time // zero: never set
}

// FindSandboxProfile returns the project's profile; a project that never
// set one gets the default (no allow-paths list).
func (db *DB) FindSandboxProfile(ctx context.Context, orgID, projectID string) (*SandboxProfile, error) {
	p := &SandboxProfile{OrgID: orgID, ProjectID: projectID, AllowPaths: []string{}}
	var paths, updated string
	var by sql.NullString
	err := db.r.QueryRowContext(ctx, `SELECT allow_paths, updated_by, updated_at FROM sandbox_profiles
		WHERE org_id = ? AND project_id = ?`, orgID, projectID).Scan(&paths, &by, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(paths), &p.AllowPaths); err != nil {
		return nil, err
	}
	if p.AllowPaths == nil {
		p.AllowPaths = []string{}
	}
	p.UpdatedBy, p.UpdatedAt = by.String, ParseTS(updated)
	return p, nil
}

// PutSandboxProfile replaces the project's profile.
func (db *DB) PutSandboxProfile(ctx context.Context, p *SandboxProfile) error {
	if p.AllowPaths == nil {
		p.AllowPaths = []string{}
	}
	paths, err := json.Marshal(p.AllowPaths)
	if err != nil {
		return err
	}
	return db.Write(ctx, func(tx *Tx) error {
		p.UpdatedAt = tx.Now
		_, err := tx.ExecContext(ctx, `INSERT INTO sandbox_profiles (project_id, org_id, allow_paths, updated_by, updated_at)
			VALUES (?,?,?,?,?)
			ON CONFLICT(project_id) DO UPDATE SET allow_paths = excluded.allow_paths, updated_by = excluded.updated_by,
			updated_at = excluded.updated_at WHERE sandbox_profiles.org_id = excluded.org_id`,
			p.ProjectID, p.OrgID, string(paths), nullStr(p.UpdatedBy), TS(p.UpdatedAt))
		return err
	})
}
