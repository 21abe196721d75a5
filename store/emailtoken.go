package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Kinds of mailed single-use tokens.
const (
	TokenReset  = "reset"
	TokenVerify = "verify"
)

// CreateEmailToken stores the hash of a mailed token; older unused tokens of the same kind die.
func (db *DB) CreateEmailToken(ctx context.Context, userID, kind string, hash []byte, ttl time.Duration) error {
	return db.Write(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE email_tokens SET used_at = ? WHERE user_id = ? AND kind = ? AND used_at IS NULL`, TS(tx.Now), userID, kind); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO email_tokens (id, user_id, kind, token_hash, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			NewID(), userID, kind, hash, TS(tx.Now.Add(ttl)), TS(tx.Now))
		return err
	})
}

// consumeEmailTokenTx marks a live token used and returns its user. Used,
// expired and unknown tokens are all the same invalid error.
func consumeEmailTokenTx(ctx context.Context, tx *Tx, kind string, hash []byte) (string, error) {
	var id, userID string
	err := tx.QueryRowContext(ctx, `SELECT id, user_id FROM email_tokens WHERE token_hash = ? AND kind = ? AND used_at IS NULL AND expires_at > ?`,
		hash, kind, TS(tx.Now)).Scan(&id, &userID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", &Error{Code: EInvalid, Message: "the link is invalid or has expired", Reason: "invalid_token"}
	}
	if err != nil {
		return "", err
	}
	_, err = tx.ExecContext(ctx, `UPDATE email_tokens SET used_at = ? WHERE id = ?`, TS(tx.Now), id)
	return userID, err
}
