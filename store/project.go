package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Project belongs to exactly one org; every project-scoped row carries both ids.
type Project struct {
	ID          string
	OrgID       string
	Name        string
	Slug        string
	Description string
	Settings    string
	ArchivedAt  *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

const projectCols = `id, org_id, name, slug, description, settings, archived_at, created_at, updated_at`

func scanProject(row interface{ Scan(...any) error }) (*Project, error) {
	var p Project
	var archived sql.NullString
	var created, updated string
	if err := row.Scan(&p.ID, &p.OrgID, &p.Name, &p.Slug, &p.Description, &p.Settings, &archived, &created, &updated); err != nil {
		return nil, err
	}
	p.ArchivedAt = scanNullTS(archived)
	p.CreatedAt, p.UpdatedAt = ParseTS(created), ParseTS(updated)
	return &p, nil
}

// FindProjectInOrg returns the project only if it belongs to orgID.
func (db *DB) FindProjectInOrg(ctx context.Context, orgID, projectID string) (*Project, error) {
	p, err := scanProject(db.r.QueryRowContext(ctx, `SELECT `+projectCols+` FROM projects WHERE id = ? AND org_id = ?`, projectID, orgID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("project")
	}
	return p, err
}
