package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
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
	// Restricted projects are visible to org owners and admins and to their explicit members only.
	Restricted bool
	ArchivedAt *time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

const projectCols = `id, org_id, name, slug, description, settings, restricted, archived_at, created_at, updated_at`

func scanProject(row interface{ Scan(...any) error }) (*Project, error) {
	var p Project
	var archived sql.NullString
	var created, updated string
	if err := row.Scan(&p.ID, &p.OrgID, &p.Name, &p.Slug, &p.Description, &p.Settings, &p.Restricted, &archived, &created, &updated); err != nil {
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

// Viewer says who is looking at projects: SeeAll for org owners and admins;
// otherwise open projects plus restricted ones listing UserID. Allow, when
// set, is an API key's project allow-list.
type Viewer struct {
	OrgID  string
	UserID string
	SeeAll bool
	Allow  []string
}

// visibleSQL is the one visibility rule, appended to every project query.
func (v Viewer) visibleSQL() (string, []any) {
	q := ` AND p.org_id = ?`
	args := []any{v.OrgID}
	if !v.SeeAll {
		q += ` AND (p.restricted = 0 OR EXISTS (SELECT 1 FROM project_members pm WHERE pm.project_id = p.id AND pm.user_id = ?))`
		args = append(args, v.UserID)
	}
	if len(v.Allow) > 0 {
		q += ` AND p.id IN (?` + strings.Repeat(`, ?`, len(v.Allow)-1) + `)`
		for _, id := range v.Allow {
			args = append(args, id)
		}
	}
	return q, args
}

// FindProjects lists the projects v may see, oldest first.
func (db *DB) FindProjects(ctx context.Context, v Viewer, includeArchived bool) ([]*Project, error) {
	where, args := v.visibleSQL()
	if !includeArchived {
		where += ` AND p.archived_at IS NULL`
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+prefixed("p.", projectCols)+` FROM projects p WHERE 1 = 1`+where+` ORDER BY p.created_at, p.id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out, err := collectPtrs(rows, scanProject)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FindVisibleProject returns a project v may see and v's explicit project
// role ("" when none). Invisible and foreign projects read as not found.
//
// Without an allow-list (an API key's) the answer is cached
// (readcache.go); the caller gets its own copy.
func (db *DB) FindVisibleProject(ctx context.Context, v Viewer, projectID string) (*Project, string, error) {
	if len(v.Allow) > 0 {
		return db.findVisibleProject(ctx, v, projectID)
	}
	see := "0"
	if v.SeeAll {
		see = "1"
	}
	vp, err := cached(ctx, db.projects, v.OrgID+"|"+v.UserID+"|"+see+"|"+projectID, func(ctx context.Context) (visibleProject, error) {
		p, role, err := db.findVisibleProject(ctx, v, projectID)
		if err != nil {
			return visibleProject{}, err
		}
		return visibleProject{p: *p, role: role}, nil
	})
	if err != nil {
		return nil, "", err
	}
	return &vp.p, vp.role, nil
}

func (db *DB) findVisibleProject(ctx context.Context, v Viewer, projectID string) (*Project, string, error) {
	where, args := v.visibleSQL()
	args = append([]any{v.UserID, projectID}, args...)
	query := `SELECT ` + prefixed("p.", projectCols) + `,
		COALESCE((SELECT role FROM project_members pm WHERE pm.project_id = p.id AND pm.user_id = ?), '')
		FROM projects p WHERE p.id = ?` + where
	// Every project-scoped request resolves its project here: without an
	// allow-list the text takes one of two forms, so it runs prepared (an
	// API key's allow-list varies in length and is prepared per call).
	var row *sql.Row
	if len(v.Allow) == 0 {
		row = db.readRow(ctx, query, args...)
	} else {
		row = db.r.QueryRowContext(ctx, query, args...)
	}
	var p Project
	var archived sql.NullString
	var created, updated, role string
	err := row.Scan(&p.ID, &p.OrgID, &p.Name, &p.Slug, &p.Description, &p.Settings, &p.Restricted, &archived, &created, &updated, &role)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", NotFound("project")
	}
	if err != nil {
		return nil, "", err
	}
	p.ArchivedAt = scanNullTS(archived)
	p.CreatedAt, p.UpdatedAt = ParseTS(created), ParseTS(updated)
	return &p, role, nil
}

// createProjectTx inserts p (OrgID and Name set), choosing a free slug in the org.
func createProjectTx(ctx context.Context, tx *Tx, p *Project) error {
	if err := tx.CheckQuota(ctx, QuotaProjects, p.OrgID, 1); err != nil {
		return err
	}
	p.ID = NewID()
	p.CreatedAt, p.UpdatedAt = tx.Now, tx.Now
	if p.Settings == "" {
		p.Settings = "{}"
	}
	base := p.Slug
	if base == "" {
		base = Slugify(p.Name)
	}
	p.Slug = base
	for i := 0; ; i++ {
		if i > 0 {
			p.Slug = base + "-" + NewID()[24:]
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO projects (`+projectCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)`,
			p.ID, p.OrgID, p.Name, p.Slug, p.Description, p.Settings, p.Restricted, TS(tx.Now), TS(tx.Now))
		if isUnique(err) && i < 3 {
			continue
		}
		return err
	}
}

// CreateProject inserts p in its own transaction.
func (db *DB) CreateProject(ctx context.Context, p *Project) error {
	return db.Write(ctx, func(tx *Tx) error { return createProjectTx(ctx, tx, p) })
}

// ProjectPatch holds the changes of a project; nil means keep.
type ProjectPatch struct {
	Name         *string
	Description  *string
	Archived     *bool
	Restricted   *bool
	FeatureFlags map[string]bool
}

// UpdateProject applies patch to a project of orgID and returns the new row.
func (db *DB) UpdateProject(ctx context.Context, orgID, id string, patch ProjectPatch) (*Project, error) {
	var out *Project
	err := db.Write(ctx, func(tx *Tx) error {
		p, err := scanProject(tx.QueryRowContext(ctx, `SELECT `+projectCols+` FROM projects WHERE id = ? AND org_id = ?`, id, orgID))
		if errors.Is(err, sql.ErrNoRows) {
			return NotFound("project")
		}
		if err != nil {
			return err
		}
		if patch.Name != nil {
			p.Name = *patch.Name
		}
		if patch.Description != nil {
			p.Description = *patch.Description
		}
		if patch.Restricted != nil {
			p.Restricted = *patch.Restricted
		}
		if patch.Archived != nil {
			switch {
			case *patch.Archived && p.ArchivedAt == nil:
				now := tx.Now
				p.ArchivedAt = &now
			case !*patch.Archived:
				p.ArchivedAt = nil
			}
		}
		if patch.FeatureFlags != nil {
			settings := map[string]any{}
			_ = json.Unmarshal([]byte(p.Settings), &settings)
			flags, _ := settings["feature_flags"].(map[string]any)
			if flags == nil {
				flags = map[string]any{}
			}
			for k, v := range patch.FeatureFlags {
				flags[k] = v
			}
			settings["feature_flags"] = flags
			b, _ := json.Marshal(settings)
			p.Settings = string(b)
		}
		p.UpdatedAt = tx.Now
		_, err = tx.ExecContext(ctx, `UPDATE projects SET name = ?, description = ?, restricted = ?, archived_at = ?, settings = ?, updated_at = ?
			WHERE id = ? AND org_id = ?`, p.Name, p.Description, p.Restricted, nullTS(p.ArchivedAt), p.Settings, TS(tx.Now), id, orgID)
		out = p
		return err
	})
	return out, err
}

// DeleteProject removes a project of orgID with everything that cascades from it.
func (db *DB) DeleteProject(ctx context.Context, orgID, id string) error {
	return db.Write(ctx, func(tx *Tx) error {
		return execOne(ctx, tx, "project", `DELETE FROM projects WHERE id = ? AND org_id = ?`, id, orgID)
	})
}

func prefixed(p, cols string) string {
	parts := strings.Split(cols, ",")
	for i, c := range parts {
		parts[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}
