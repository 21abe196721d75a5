package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
)

// User is an account. PasswordHash never leaves the server.
type User struct {
	ID               string
	Email            string
	Name             string
	PasswordHash     string
	EmailVerifiedAt  *time.Time
	Avatar           string
	TokensValidAfter time.Time
	LastLoginAt      *time.Time
	CurrentOrgID     string
	DeletedAt        *time.Time
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// UserPatch holds the fields a user may change about themself; nil means keep.
type UserPatch struct {
	Name   *string
	Avatar *string
}

const userCols = `id, email, name, password_hash, email_verified_at, avatar, tokens_valid_after,
	last_login_at, COALESCE(current_org_id, ''), deleted_at, created_at, updated_at`

func scanUser(row interface{ Scan(...any) error }) (*User, error) {
	var u User
	var verified, lastLogin, deleted sql.NullString
	var valid, created, updated string
	err := row.Scan(&u.ID, &u.Email, &u.Name, &u.PasswordHash, &verified, &u.Avatar, &valid,
		&lastLogin, &u.CurrentOrgID, &deleted, &created, &updated)
	if err != nil {
		return nil, err
	}
	u.EmailVerifiedAt = scanNullTS(verified)
	u.LastLoginAt = scanNullTS(lastLogin)
	u.DeletedAt = scanNullTS(deleted)
	u.TokensValidAfter = ParseTS(valid)
	u.CreatedAt = ParseTS(created)
	u.UpdatedAt = ParseTS(updated)
	return &u, nil
}

// NormalizeEmail is the one place that decides when two addresses are the same account.
func NormalizeEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// CountUsers counts accounts, including those awaiting erasure.
func (db *DB) CountUsers(ctx context.Context) (int, error) {
	var n int
	err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM users`).Scan(&n)
	return n, err
}

// FindUserByID returns a live (not erased) user. It runs on every /me call,
// so it goes through the prepared-statement cache.
func (db *DB) FindUserByID(ctx context.Context, id string) (*User, error) {
	u, err := scanUser(db.readRow(ctx, `SELECT `+userCols+` FROM users WHERE id = ? AND deleted_at IS NULL`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("user")
	}
	return u, err
}

// FindUserByEmail returns a live user by address.
func (db *DB) FindUserByEmail(ctx context.Context, email string) (*User, error) {
	return findUser(ctx, db.r, `email = ?`, NormalizeEmail(email))
}

func findUser(ctx context.Context, q Querier, where string, arg any) (*User, error) {
	u, err := scanUser(q.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE `+where+` AND deleted_at IS NULL`, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("user")
	}
	return u, err
}

// findUserTx reads a user inside a write transaction.
func findUserTx(ctx context.Context, tx *Tx, id string) (*User, error) {
	return findUser(ctx, tx, `id = ?`, id)
}

// createPersonalOrgTx creates the personal organization every registered
// user owns, and makes it their current one.
func createPersonalOrgTx(ctx context.Context, tx *Tx, u *User) (*Organization, error) {
	name := u.Name
	if name == "" {
		name = strings.SplitN(u.Email, "@", 2)[0]
	}
	o := &Organization{Name: name + "'s organization", Personal: true}
	if err := createOrgTx(ctx, tx, o, u.ID); err != nil {
		return nil, err
	}
	return o, setCurrentOrgTx(ctx, tx, u.ID, o.ID)
}

// createUserTx inserts u, filling id and times.
func createUserTx(ctx context.Context, tx *Tx, u *User) error {
	u.ID = NewID()
	u.Email = NormalizeEmail(u.Email)
	u.CreatedAt, u.UpdatedAt = tx.Now, tx.Now
	// One second back so tokens minted in this very second are not vetoed by rounding.
	u.TokensValidAfter = tx.Now.Add(-time.Second)
	_, err := tx.ExecContext(ctx, `INSERT INTO users (id, email, name, password_hash, email_verified_at, avatar,
		tokens_valid_after, created_at, updated_at) VALUES (?, ?, ?, ?, ?, '', ?, ?, ?)`,
		u.ID, u.Email, u.Name, u.PasswordHash, nullTS(u.EmailVerifiedAt), TS(u.TokensValidAfter), TS(tx.Now), TS(tx.Now))
	if isUnique(err) {
		return &Error{Code: EConflict, Message: "an account with this email already exists", Reason: "email_taken"}
	}
	return err
}

// setCurrentOrgTx records which organization the user works in.
func setCurrentOrgTx(ctx context.Context, tx *Tx, userID, orgID string) error {
	_, err := tx.ExecContext(ctx, `UPDATE users SET current_org_id = ? WHERE id = ?`, orgID, userID)
	return err
}

// UpdateUser applies a patch and returns the new row.
func (db *DB) UpdateUser(ctx context.Context, id string, p UserPatch) (*User, error) {
	var out *User
	err := db.Write(ctx, func(tx *Tx) error {
		if p.Name != nil {
			if _, err := tx.ExecContext(ctx, `UPDATE users SET name = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL`, *p.Name, TS(tx.Now), id); err != nil {
				return err
			}
		}
		if p.Avatar != nil {
			if _, err := tx.ExecContext(ctx, `UPDATE users SET avatar = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL`, *p.Avatar, TS(tx.Now), id); err != nil {
				return err
			}
		}
		u, err := findUserTx(ctx, tx, id)
		out = u
		return err
	})
	return out, err
}

// SetPassword replaces the password hash. When revokeOthers is set, every login
// session except keepSession is revoked and the token epoch moves, so a stolen
// session dies with the old password.
func (db *DB) SetPassword(ctx context.Context, userID, hash string, keepSession string) error {
	return db.Write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL`, hash, TS(tx.Now), userID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return NotFound("user")
		}
		_, err = tx.ExecContext(ctx, `UPDATE auth_sessions SET revoked_at = ?, revoke_reason = 'password_changed'
			WHERE user_id = ? AND revoked_at IS NULL AND id != ?`, TS(tx.Now), userID, keepSession)
		return err
	})
}

// UpgradePasswordHash replaces a password hash made with older parameters by
// one of the same password made with the current ones. It changes nothing if
// the password changed meanwhile (the stored hash is no longer old), and,
// unlike SetPassword, ends no session: the password is the same.
func (db *DB) UpgradePasswordHash(ctx context.Context, userID, old, upgraded string) error {
	return db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE id = ? AND password_hash = ? AND deleted_at IS NULL`,
			upgraded, userID, old)
		return err
	})
}

// markEmailVerifiedTx stamps the address as verified (idempotent).
func markEmailVerifiedTx(ctx context.Context, tx *Tx, userID string) error {
	_, err := tx.ExecContext(ctx, `UPDATE users SET email_verified_at = COALESCE(email_verified_at, ?), updated_at = ? WHERE id = ?`, TS(tx.Now), TS(tx.Now), userID)
	return err
}

// touchLoginTx records a successful sign-in.
func touchLoginTx(ctx context.Context, tx *Tx, userID string) error {
	_, err := tx.ExecContext(ctx, `UPDATE users SET last_login_at = ? WHERE id = ?`, TS(tx.Now), userID)
	return err
}

// RevokeAllForUser is logout-all: every session revoked and the epoch stamped,
// so access tokens and API keys issued before now fail from their next request.
func (db *DB) RevokeAllForUser(ctx context.Context, userID, reason string) error {
	return db.Write(ctx, func(tx *Tx) error { return revokeAllForUserTx(ctx, tx, userID, reason) })
}

// revokeAllForUserTx is RevokeAllForUser inside a caller's transaction.
func revokeAllForUserTx(ctx context.Context, tx *Tx, userID, reason string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE users SET tokens_valid_after = ?, updated_at = ? WHERE id = ?`, TS(tx.Now), TS(tx.Now), userID); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE auth_sessions SET revoked_at = ?, revoke_reason = ? WHERE user_id = ? AND revoked_at IS NULL`, TS(tx.Now), reason, userID)
	return err
}
