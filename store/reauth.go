package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// AuthSessionReauthAt is when the session's user last proved who they are:
// the last re-authentication, or the sign-in that created the session.
func (db *DB) AuthSessionReauthAt(ctx context.Context, userID, sessionID string) (time.Time, error) {
	var at string
	err := db.r.QueryRowContext(ctx, `SELECT COALESCE(reauth_at, created_at) FROM auth_sessions
		WHERE id = ? AND user_id = ? AND revoked_at IS NULL`, sessionID, userID).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, NotFound("session")
	}
	if err != nil {
		return time.Time{}, err
	}
	return ParseTS(at), nil
}

// MarkReauthenticated records that the session's user just proved who they are.
func (db *DB) MarkReauthenticated(ctx context.Context, userID, sessionID string) error {
	return db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE auth_sessions SET reauth_at = ? WHERE id = ? AND user_id = ?`, TS(tx.Now), sessionID, userID)
		return err
	})
}
