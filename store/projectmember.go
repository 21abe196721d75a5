package store

import (
	"context"
	"time"
)

// ProjectMember is explicit access of one org member to one project. Role
// caps the member's org role inside the project (viewer makes it read-only).
type ProjectMember struct {
	ProjectID string
	UserID    string
	Email     string
	Name      string
	Role      string
	OrgRole   string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// FindProjectMembers lists the explicit members of a project of orgID.
func (db *DB) FindProjectMembers(ctx context.Context, orgID, projectID string) ([]ProjectMember, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT pm.project_id, pm.user_id, u.email, u.name, pm.role, COALESCE(m.role, ''), pm.created_at, pm.updated_at
		FROM project_members pm JOIN users u ON u.id = pm.user_id
		LEFT JOIN org_members m ON m.org_id = pm.org_id AND m.user_id = pm.user_id
		WHERE pm.org_id = ? AND pm.project_id = ? ORDER BY pm.created_at, pm.user_id`, orgID, projectID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []ProjectMember{}
	for rows.Next() {
		var m ProjectMember
		var created, updated string
		if err := rows.Scan(&m.ProjectID, &m.UserID, &m.Email, &m.Name, &m.Role, &m.OrgRole, &created, &updated); err != nil {
			return nil, err
		}
		m.CreatedAt, m.UpdatedAt = ParseTS(created), ParseTS(updated)
		out = append(out, m)
	}
	return out, rows.Err()
}

func findProjectMemberTx(ctx context.Context, tx *Tx, orgID, projectID, userID string) (*ProjectMember, error) {
	var m ProjectMember
	var created, updated string
	err := tx.QueryRowContext(ctx, `SELECT pm.project_id, pm.user_id, u.email, u.name, pm.role, COALESCE(m.role, ''), pm.created_at, pm.updated_at
		FROM project_members pm JOIN users u ON u.id = pm.user_id
		LEFT JOIN org_members m ON m.org_id = pm.org_id AND m.user_id = pm.user_id
		WHERE pm.org_id = ? AND pm.project_id = ? AND pm.user_id = ?`, orgID, projectID, userID).
		Scan(&m.ProjectID, &m.UserID, &m.Email, &m.Name, &m.Role, &m.OrgRole, &created, &updated)
	if err != nil {
		return nil, NotFound("project member")
	}
	m.CreatedAt, m.UpdatedAt = ParseTS(created), ParseTS(updated)
	return &m, nil
}

// AddProjectMember gives an org member explicit access to a project of orgID.
// A user outside the org reads as not found; a second add is a conflict.
func (db *DB) AddProjectMember(ctx context.Context, orgID, projectID, userID, role string) (*ProjectMember, error) {
	var out *ProjectMember
	err := db.Write(ctx, func(tx *Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM projects WHERE id = ? AND org_id = ?`, projectID, orgID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return NotFound("project")
		}
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM org_members WHERE org_id = ? AND user_id = ?`, orgID, userID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return NotFound("user")
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO project_members (project_id, org_id, user_id, role, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
			projectID, orgID, userID, role, TS(tx.Now), TS(tx.Now))
		if isUnique(err) {
			return &Error{Code: EConflict, Message: "already a member of this project", Reason: "already_member"}
		}
		if err != nil {
			return err
		}
		out, err = findProjectMemberTx(ctx, tx, orgID, projectID, userID)
		return err
	})
	return out, err
}

// UpdateProjectMember changes a project member's role.
func (db *DB) UpdateProjectMember(ctx context.Context, orgID, projectID, userID, role string) (*ProjectMember, error) {
	var out *ProjectMember
	err := db.Write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE project_members SET role = ?, updated_at = ? WHERE org_id = ? AND project_id = ? AND user_id = ?`,
			role, TS(tx.Now), orgID, projectID, userID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return NotFound("project member")
		}
		out, err = findProjectMemberTx(ctx, tx, orgID, projectID, userID)
		return err
	})
	return out, err
}

// RemoveProjectMember takes explicit access away.
func (db *DB) RemoveProjectMember(ctx context.Context, orgID, projectID, userID string) error {
	return db.Write(ctx, func(tx *Tx) error {
		return execOne(ctx, tx, "project member", `DELETE FROM project_members WHERE org_id = ? AND project_id = ? AND user_id = ?`, orgID, projectID, userID)
	})
}
