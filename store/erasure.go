package store

import (
	"context"
)

// RequestErasure closes an account now and leaves the deletion of its data to
// the erasure worker. It refuses while the user is the sole owner of an org
// that has other members: they must promote someone first.
func (db *DB) RequestErasure(ctx context.Context, userID string) (string, error) {
	id := NewID()
	err := db.Write(ctx, func(tx *Tx) error {
		orgs, err := soleOwnedOrgsTx(ctx, tx, userID)
		if err != nil {
			return err
		}
		if len(orgs) > 0 {
			return &Error{Code: EInvalid, Message: "you are the sole owner of an organization with other members; transfer ownership first", Reason: "sole_owner"}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET deleted_at = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL`, TS(tx.Now), TS(tx.Now), userID); err != nil {
			return err
		}
		if err := revokeAllForUserTx(ctx, tx, userID, "account_deleted"); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO erasure_requests (id, user_id, requested_at) VALUES (?, ?, ?)`, id, userID, TS(tx.Now))
		return err
	})
	return id, err
}

// ErasedUser is what the worker removed, so the caller can delete files.
type ErasedUser struct {
	UserID string
	Avatar string
}

// ProcessErasures deletes the data of pending erasure requests: the user row
// (cascading to sessions, memberships, preferences) and the orgs in which the
// user was the only member.
func (db *DB) ProcessErasures(ctx context.Context, limit int) ([]ErasedUser, error) {
	var done []ErasedUser
	err := db.Write(ctx, func(tx *Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT e.id, e.user_id, COALESCE(u.avatar, '') FROM erasure_requests e LEFT JOIN users u ON u.id = e.user_id
			WHERE e.completed_at IS NULL ORDER BY e.requested_at LIMIT ?`, limit)
		if err != nil {
			return err
		}
		type req struct{ id, user, avatar string }
		var reqs []req
		for rows.Next() {
			var r req
			if err := rows.Scan(&r.id, &r.user, &r.avatar); err != nil {
				rows.Close()
				return err
			}
			reqs = append(reqs, r)
		}
		rows.Close()
		for _, r := range reqs {
			// The knowledge indexes of every server learn of the orgs' end from the feed.
			orgs, err := soloOrgsTx(ctx, tx, r.user)
			if err != nil {
				return err
			}
			if err := recordKnowledgeErasuresTx(ctx, tx, orgs); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM organizations WHERE id IN (
				SELECT org_id FROM org_members WHERE user_id = ?) AND (SELECT COUNT(*) FROM org_members m WHERE m.org_id = organizations.id) = 1`, r.user); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM users WHERE id = ?`, r.user); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE erasure_requests SET completed_at = ? WHERE id = ?`, TS(tx.Now), r.id); err != nil {
				return err
			}
			done = append(done, ErasedUser{UserID: r.user, Avatar: r.avatar})
		}
		return nil
	})
	return done, err
}

// soloOrgsTx lists the orgs whose only member is userID: those the erasure
// deletes with the user.
func soloOrgsTx(ctx context.Context, tx *Tx, userID string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id FROM organizations WHERE id IN (
		SELECT org_id FROM org_members WHERE user_id = ?) AND (SELECT COUNT(*) FROM org_members m WHERE m.org_id = organizations.id) = 1`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
