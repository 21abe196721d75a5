package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Invitation asks one address to join an org with a role. Only a hash of its
// token is stored; the token travels by mail.
type Invitation struct {
	ID         string
	OrgID      string
	OrgName    string
	Email      string
	Role       string
	TokenHash  []byte
	InvitedBy  string
	ExpiresAt  time.Time
	AcceptedAt *time.Time
	AcceptedBy string
	RevokedAt  *time.Time
	CreatedAt  time.Time
}

// Status is pending, accepted, revoked or expired at now.
func (i *Invitation) Status(now time.Time) string {
	switch {
	case i.AcceptedAt != nil:
		return "accepted"
	case i.RevokedAt != nil:
		return "revoked"
	case !i.ExpiresAt.After(now):
		return "expired"
	}
	return "pending"
}

const invitationCols = `i.id, i.org_id, o.name, i.email, i.role, i.token_hash, COALESCE(i.invited_by, ''), i.expires_at, i.accepted_at,
	COALESCE(i.accepted_by, ''), i.revoked_at, i.created_at`

func scanInvitation(row interface{ Scan(...any) error }) (*Invitation, error) {
	var i Invitation
	var expires, created string
	var accepted, revoked sql.NullString
	err := row.Scan(&i.ID, &i.OrgID, &i.OrgName, &i.Email, &i.Role, &i.TokenHash, &i.InvitedBy, &expires, &accepted, &i.AcceptedBy, &revoked, &created)
	if err != nil {
		return nil, err
	}
	i.ExpiresAt, i.CreatedAt = ParseTS(expires), ParseTS(created)
	i.AcceptedAt, i.RevokedAt = scanNullTS(accepted), scanNullTS(revoked)
	return &i, nil
}

// CreateInvitation stores inv. Inviting a current member is a conflict; a
// pending invitation to the same address is replaced (its token stops working).
func (db *DB) CreateInvitation(ctx context.Context, inv *Invitation) error {
	inv.Email = NormalizeEmail(inv.Email)
	return db.Write(ctx, func(tx *Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM org_members m JOIN users u ON u.id = m.user_id
			WHERE m.org_id = ? AND u.email = ?`, inv.OrgID, inv.Email).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return &Error{Code: EConflict, Message: "this address already belongs to a member of the organization", Reason: "already_member"}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE invitations SET revoked_at = ? WHERE org_id = ? AND email = ? AND accepted_at IS NULL AND revoked_at IS NULL`,
			TS(tx.Now), inv.OrgID, inv.Email); err != nil {
			return err
		}
		// A pending invitation holds a seat (after the one it replaces was revoked above).
		if err := tx.CheckQuota(ctx, QuotaMembers, inv.OrgID, 1); err != nil {
			return err
		}
		inv.ID, inv.CreatedAt = NewID(), tx.Now
		_, err := tx.ExecContext(ctx, `INSERT INTO invitations (id, org_id, email, role, token_hash, invited_by, expires_at, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, inv.ID, inv.OrgID, inv.Email, inv.Role, inv.TokenHash, inv.InvitedBy, TS(inv.ExpiresAt), TS(tx.Now))
		if err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT name FROM organizations WHERE id = ?`, inv.OrgID).Scan(&inv.OrgName)
	})
}

// FindInvitations lists an org's invitations, newest first.
func (db *DB) FindInvitations(ctx context.Context, orgID string) ([]*Invitation, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+invitationCols+` FROM invitations i JOIN organizations o ON o.id = i.org_id
		WHERE i.org_id = ? ORDER BY i.created_at DESC, i.id DESC`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out, err := collectPtrs(rows, scanInvitation)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RevokeInvitation revokes a pending invitation of orgID. Accepted ones are a conflict.
func (db *DB) RevokeInvitation(ctx context.Context, orgID, id string) error {
	return db.Write(ctx, func(tx *Tx) error {
		i, err := scanInvitation(tx.QueryRowContext(ctx, `SELECT `+invitationCols+` FROM invitations i JOIN organizations o ON o.id = i.org_id
			WHERE i.org_id = ? AND i.id = ?`, orgID, id))
		if errors.Is(err, sql.ErrNoRows) {
			return NotFound("invitation")
		}
		if err != nil {
			return err
		}
		if i.AcceptedAt != nil {
			return &Error{Code: EConflict, Message: "the invitation was already accepted; remove the member instead", Reason: "invitation_used"}
		}
		_, err = tx.ExecContext(ctx, `UPDATE invitations SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`, TS(tx.Now), id)
		return err
	})
}

// claimInvitationTx finds the invitation of a token and marks it accepted by
// userID. Unknown, revoked, used and expired tokens are 400 with distinct codes.
func claimInvitationTx(ctx context.Context, tx *Tx, tokenHash []byte) (*Invitation, error) {
	i, err := scanInvitation(tx.QueryRowContext(ctx, `SELECT `+invitationCols+` FROM invitations i JOIN organizations o ON o.id = i.org_id
		WHERE i.token_hash = ?`, tokenHash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &Error{Code: EInvalid, Message: "invalid invitation token", Reason: "invalid_invitation"}
	}
	if err != nil {
		return nil, err
	}
	switch i.Status(tx.Now) {
	case "accepted":
		return nil, &Error{Code: EInvalid, Message: "this invitation was already used", Reason: "invitation_used"}
	case "revoked":
		return nil, &Error{Code: EInvalid, Message: "this invitation was revoked", Reason: "invitation_revoked"}
	case "expired":
		return nil, &Error{Code: EInvalid, Message: "this invitation has expired; ask for a new one", Reason: "invitation_expired"}
	}
	return i, nil
}

// markInvitationAcceptedTx records who accepted an invitation.
func markInvitationAcceptedTx(ctx context.Context, tx *Tx, id, userID string) error {
	_, err := tx.ExecContext(ctx, `UPDATE invitations SET accepted_at = ?, accepted_by = ? WHERE id = ? AND accepted_at IS NULL`, TS(tx.Now), userID, id)
	return err
}
