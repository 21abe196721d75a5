package store

import (
	"context"
	"time"
)

// ResetPassword redeems a mailed reset token: the password hash is replaced,
// the address counts as verified (the reset proves control of the mailbox)
// and every session of the account ends. It returns the user's id.
func (db *DB) ResetPassword(ctx context.Context, tokenHash []byte, passwordHash string) (string, error) {
	var userID string
	err := db.Write(ctx, func(tx *Tx) error {
		uid, err := consumeEmailTokenTx(ctx, tx, TokenReset, tokenHash)
		if err != nil {
			return err
		}
		userID = uid
		if _, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL`, passwordHash, TS(tx.Now), uid); err != nil {
			return err
		}
		if err := markEmailVerifiedTx(ctx, tx, uid); err != nil {
			return err
		}
		return revokeAllForUserTx(ctx, tx, uid, "password_reset")
	})
	return userID, err
}

// VerifyEmail redeems a mailed verification token.
func (db *DB) VerifyEmail(ctx context.Context, tokenHash []byte) error {
	return db.Write(ctx, func(tx *Tx) error {
		uid, err := consumeEmailTokenTx(ctx, tx, TokenVerify, tokenHash)
		if err != nil {
			return err
		}
		return markEmailVerifiedTx(ctx, tx, uid)
	})
}

// MaxPrimaryMFA bounds a user's TOTP and WebAuthn methods.
const MaxPrimaryMFA = 20

// EnrolMFA stores a new TOTP or WebAuthn method. The first one also stores
// the backup-code set given by its keyed hashes; firstFactor reports whether
// it did (the caller shows the codes only then).
func (db *DB) EnrolMFA(ctx context.Context, m *MFAMethod, backupHashes [][]byte) (firstFactor bool, err error) {
	err = db.Write(ctx, func(tx *Tx) error {
		n, err := countPrimaryMFATx(ctx, tx, m.UserID)
		if err != nil {
			return err
		}
		if n >= MaxPrimaryMFA {
			return &Error{Code: EConflict, Message: "too many second factors; remove one first", Reason: "mfa_limit"}
		}
		if err := createMFAMethodTx(ctx, tx, m); err != nil {
			return err
		}
		if firstFactor = n == 0; firstFactor {
			_, err = replaceBackupCodesTx(ctx, tx, m.UserID, backupHashes)
		}
		return err
	})
	return firstFactor, err
}

// ReplaceBackupCodes swaps the user's backup-code set for the given keyed
// hashes at once; a user with no TOTP or WebAuthn method has none to replace
// (mfa_not_enabled). It returns when the new set was created.
func (db *DB) ReplaceBackupCodes(ctx context.Context, userID string, hashes [][]byte) (time.Time, error) {
	var created time.Time
	err := db.Write(ctx, func(tx *Tx) error {
		n, err := countPrimaryMFATx(ctx, tx, userID)
		if err != nil {
			return err
		}
		if n == 0 {
			return &Error{Code: EInvalid, Message: "Enrol an authenticator app or a security key first", Reason: "mfa_not_enabled"}
		}
		created = tx.Now
		_, err = replaceBackupCodesTx(ctx, tx, userID, hashes)
		return err
	})
	return created, err
}
