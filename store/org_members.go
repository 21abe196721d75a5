package store

import (
	"context"
	"time"
)

// Member is a user's membership as the org's member list shows it.
type Member struct {
	UserID    string
	Email     string
	Name      string
	Role      string
	JoinedAt  time.Time
	UpdatedAt time.Time
}

const memberSelect = `SELECT m.user_id, u.email, u.name, m.role, m.created_at, m.updated_at
	FROM org_members m JOIN users u ON u.id = m.user_id AND u.deleted_at IS NULL`

func scanMember(row interface{ Scan(...any) error }) (*Member, error) {
	var m Member
	var created, updated string
	if err := row.Scan(&m.UserID, &m.Email, &m.Name, &m.Role, &created, &updated); err != nil {
		return nil, err
	}
	m.JoinedAt, m.UpdatedAt = ParseTS(created), ParseTS(updated)
	return &m, nil
}

// FindMembers lists an org's members, oldest first.
func (db *DB) FindMembers(ctx context.Context, orgID string) ([]*Member, error) {
	rows, err := db.r.QueryContext(ctx, memberSelect+` WHERE m.org_id = ? ORDER BY m.created_at, m.user_id`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out, err := collectPtrs(rows, scanMember)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func findMemberTx(ctx context.Context, tx *Tx, orgID, userID string) (*Member, error) {
	m, err := scanMember(tx.QueryRowContext(ctx, memberSelect+` WHERE m.org_id = ? AND m.user_id = ?`, orgID, userID))
	if err != nil {
		return nil, NotFound("member")
	}
	return m, nil
}

func countOwnersTx(ctx context.Context, tx *Tx, orgID string) (int, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM org_members WHERE org_id = ? AND role = 'owner'`, orgID).Scan(&n)
	return n, err
}

var errLastOwner = &Error{Code: EConflict, Message: "the last owner cannot leave, be demoted or be removed; promote another member to owner first", Reason: "last_owner"}

// MemberGuard decides, inside the transaction, whether the actor may touch a
// member whose current role is targetRole (the role hierarchy lives in the server).
type MemberGuard func(targetRole string) error

// ChangeMemberRole sets a member's role. The last owner cannot be demoted.
func (db *DB) ChangeMemberRole(ctx context.Context, orgID, userID, role string, guard MemberGuard) (*Member, string, error) {
	var out *Member
	var old string
	err := db.Write(ctx, func(tx *Tx) error {
		m, err := findMemberTx(ctx, tx, orgID, userID)
		if err != nil {
			return err
		}
		old = m.Role
		if err := guard(m.Role); err != nil {
			return err
		}
		if m.Role == RoleOwner && role != RoleOwner {
			n, err := countOwnersTx(ctx, tx, orgID)
			if err != nil {
				return err
			}
			if n <= 1 {
				return errLastOwner
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE org_members SET role = ?, updated_at = ? WHERE org_id = ? AND user_id = ?`, role, TS(tx.Now), orgID, userID); err != nil {
			return err
		}
		out, err = findMemberTx(ctx, tx, orgID, userID)
		return err
	})
	return out, old, err
}

// RemoveMember ends a membership (removal or leaving). The last owner cannot
// go. The member's explicit project access and API keys in the org end with it,
// so re-adding the user later does not revive old keys.
func (db *DB) RemoveMember(ctx context.Context, orgID, userID string, guard MemberGuard) error {
	return db.Write(ctx, func(tx *Tx) error {
		m, err := findMemberTx(ctx, tx, orgID, userID)
		if err != nil {
			return err
		}
		if err := guard(m.Role); err != nil {
			return err
		}
		if m.Role == RoleOwner {
			n, err := countOwnersTx(ctx, tx, orgID)
			if err != nil {
				return err
			}
			if n <= 1 {
				return errLastOwner
			}
		}
		for _, q := range []string{
			`DELETE FROM org_members WHERE org_id = ? AND user_id = ?`,
			`DELETE FROM project_members WHERE org_id = ? AND user_id = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, orgID, userID); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = ? WHERE org_id = ? AND created_by = ? AND revoked_at IS NULL`, TS(tx.Now), orgID, userID); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE users SET current_org_id = NULL WHERE id = ? AND current_org_id = ?`, userID, orgID)
		return err
	})
}

// AddMember adds userID to orgID with role; an existing membership is a conflict.
func (db *DB) AddMember(ctx context.Context, orgID, userID, role string) error {
	return db.Write(ctx, func(tx *Tx) error { return addMemberTx(ctx, tx, orgID, userID, role) })
}
