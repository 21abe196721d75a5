package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// MFA method kinds. A backup_code method is the user's current set of codes.
const (
	MFATOTP       = "totp"
	MFAWebAuthn   = "webauthn"
	MFABackupCode = "backup_code"
)

// MFAMethod is one enrolled second factor. Secret (TOTP) arrives sealed by the
// server; the store never sees a usable secret.
type MFAMethod struct {
	ID           string
	UserID       string
	Kind         string
	Name         string
	Secret       []byte
	LastStep     int64
	CredentialID []byte
	Credential   string
	SignCount    uint32
	CreatedAt    time.Time
	LastUsedAt   *time.Time
	// Remaining is the number of unused codes of a backup_code method.
	Remaining int
}

const mfaCols = `m.id, m.user_id, m.kind, m.name, m.secret, m.last_step, m.credential_id, m.credential, m.sign_count, m.created_at, m.last_used_at,
	(SELECT COUNT(*) FROM mfa_backup_codes b WHERE b.method_id = m.id AND b.used_at IS NULL)`

func scanMFA(row interface{ Scan(...any) error }) (*MFAMethod, error) {
	var m MFAMethod
	var cred sql.NullString
	var created string
	var used sql.NullString
	var count int64
	if err := row.Scan(&m.ID, &m.UserID, &m.Kind, &m.Name, &m.Secret, &m.LastStep, &m.CredentialID, &cred, &count, &created, &used, &m.Remaining); err != nil {
		return nil, err
	}
	m.Credential, m.SignCount = cred.String, uint32(count)
	m.CreatedAt, m.LastUsedAt = ParseTS(created), scanNullTS(used)
	return &m, nil
}

// FindMFAMethods lists a user's methods, oldest first; kind "" means all kinds.
func (db *DB) FindMFAMethods(ctx context.Context, userID, kind string) ([]*MFAMethod, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+mfaCols+` FROM mfa_methods m
		WHERE m.user_id = ? AND (? = '' OR m.kind = ?) ORDER BY m.created_at, m.id`, userID, kind, kind)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*MFAMethod
	for rows.Next() {
		m, err := scanMFA(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// FindMFAMethod reads one of the user's methods; another user's id is a 404.
func (db *DB) FindMFAMethod(ctx context.Context, userID, id string) (*MFAMethod, error) {
	m, err := scanMFA(db.r.QueryRowContext(ctx, `SELECT `+mfaCols+` FROM mfa_methods m WHERE m.id = ? AND m.user_id = ?`, id, userID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("method")
	}
	return m, err
}

// HasMFA says whether the user can sign in with a second factor (a backup-code
// set counts only while one of its codes is unused). It runs on every /me, so
// it is one EXISTS through the prepared-statement cache instead of MFAKinds'
// multi-row read.
func (db *DB) HasMFA(ctx context.Context, userID string) (bool, error) {
	var has bool
	err := db.readRow(ctx, `SELECT `+hasMFAExpr, userID).Scan(&has)
	return has, err
}

// hasMFAExpr is HasMFA's question as an expression of one user id parameter.
const hasMFAExpr = `EXISTS (SELECT 1 FROM mfa_methods m WHERE m.user_id = ? AND (m.kind != 'backup_code'
		OR EXISTS (SELECT 1 FROM mfa_backup_codes b WHERE b.method_id = m.id AND b.used_at IS NULL)))`

// FindUserWithMFA is FindUserByID and HasMFA in one statement: /me asks
// both on every call, and each separate read is a read transaction of its
// own (locks taken and released with system calls).
// The answer is cached (readcache.go); the caller gets its own copy.
func (db *DB) FindUserWithMFA(ctx context.Context, id string) (*User, bool, error) {
	um, err := cached(ctx, db.mfaUsers, id, func(ctx context.Context) (userMFA, error) {
		u, has, err := db.findUserWithMFA(ctx, id)
		if err != nil {
			return userMFA{}, err
		}
		return userMFA{u: *u, mfa: has}, nil
	})
	if err != nil {
		return nil, false, err
	}
	return &um.u, um.mfa, nil
}

func (db *DB) findUserWithMFA(ctx context.Context, id string) (*User, bool, error) {
	var has bool
	u, err := scanUser(withTrailing{db.readRow(ctx, `SELECT `+userCols+`, `+hasMFAExpr+` FROM users WHERE id = ? AND deleted_at IS NULL`,
		id, id), &has})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, NotFound("user")
	}
	return u, has, err
}

// withTrailing hands a row's columns to a scanX helper and one extra
// trailing column to extra.
type withTrailing struct {
	row   rowScanner
	extra any
}

func (w withTrailing) Scan(dest ...any) error { return w.row.Scan(append(dest, w.extra)...) }

// MFAKinds returns the kinds a user can sign in with, in a fixed order; a
// backup-code set counts only while one of its codes is unused.
func (db *DB) MFAKinds(ctx context.Context, userID string) ([]string, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT DISTINCT m.kind FROM mfa_methods m WHERE m.user_id = ? AND (m.kind != 'backup_code'
		OR EXISTS (SELECT 1 FROM mfa_backup_codes b WHERE b.method_id = m.id AND b.used_at IS NULL))`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		have[k] = true
	}
	out := []string{}
	for _, k := range []string{MFATOTP, MFAWebAuthn, MFABackupCode} {
		if have[k] {
			out = append(out, k)
		}
	}
	return out, rows.Err()
}

// countPrimaryMFATx counts a user's TOTP and WebAuthn methods (backup codes
// are a fallback, not a factor of their own).
func countPrimaryMFATx(ctx context.Context, tx *Tx, userID string) (int, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM mfa_methods WHERE user_id = ? AND kind IN ('totp', 'webauthn')`, userID).Scan(&n)
	return n, err
}

// createMFAMethodTx inserts m; ID must be set (a sealed TOTP secret is bound to it).
func createMFAMethodTx(ctx context.Context, tx *Tx, m *MFAMethod) error {
	m.CreatedAt = tx.Now
	var credID, cred any
	if len(m.CredentialID) > 0 {
		credID, cred = m.CredentialID, m.Credential
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO mfa_methods (id, user_id, kind, name, secret, last_step, credential_id, credential, sign_count, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, m.ID, m.UserID, m.Kind, m.Name, m.Secret, m.LastStep, credID, cred, int64(m.SignCount), TS(tx.Now))
	if isUnique(err) {
		return &Error{Code: EConflict, Message: "this security key is already registered", Reason: "credential_exists"}
	}
	return err
}

// DeleteMFAMethod removes one of the user's methods. When the last TOTP or
// WebAuthn method goes, the backup codes go with it: they back up a factor.
func (db *DB) DeleteMFAMethod(ctx context.Context, userID, id string) error {
	return db.Write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM mfa_methods WHERE id = ? AND user_id = ?`, id, userID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return NotFound("method")
		}
		n, err := countPrimaryMFATx(ctx, tx, userID)
		if err != nil || n > 0 {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM mfa_methods WHERE user_id = ? AND kind = 'backup_code'`, userID)
		return err
	})
}

// AdvanceTOTPStep records step as the last accepted one, only if it is later
// than the stored one: one conditional UPDATE, so two requests with the same
// code cannot both win. It reports whether this caller won.
func (db *DB) AdvanceTOTPStep(ctx context.Context, id string, step int64) (bool, error) {
	var ok bool
	err := db.Write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE mfa_methods SET last_step = ?, last_used_at = ? WHERE id = ? AND kind = 'totp' AND last_step < ?`,
			step, TS(tx.Now), id, step)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		ok = n == 1
		return nil
	})
	return ok, err
}

// UpdateWebAuthnCounter stores the credential after a good assertion. The
// counter must grow, except that 0 after 0 means the authenticator keeps no
// counter (WebAuthn §6.1.1); the condition sits in the UPDATE so concurrent
// assertions with the same counter cannot both pass.
func (db *DB) UpdateWebAuthnCounter(ctx context.Context, id string, count uint32, credential string) (bool, error) {
	var ok bool
	err := db.Write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE mfa_methods SET sign_count = ?, credential = ?, last_used_at = ?
			WHERE id = ? AND kind = 'webauthn' AND (sign_count < ? OR (sign_count = 0 AND ? = 0))`,
			int64(count), credential, TS(tx.Now), id, int64(count), int64(count))
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		ok = n == 1
		return nil
	})
	return ok, err
}

// replaceBackupCodesTx drops the user's backup-code set and stores a new one
// from the given keyed hashes.
func replaceBackupCodesTx(ctx context.Context, tx *Tx, userID string, hashes [][]byte) (*MFAMethod, error) {
	if _, err := tx.ExecContext(ctx, `DELETE FROM mfa_methods WHERE user_id = ? AND kind = 'backup_code'`, userID); err != nil {
		return nil, err
	}
	m := &MFAMethod{ID: NewID(), UserID: userID, Kind: MFABackupCode, Name: "Backup codes", Remaining: len(hashes)}
	if err := createMFAMethodTx(ctx, tx, m); err != nil {
		return nil, err
	}
	for _, h := range hashes {
		if _, err := tx.ExecContext(ctx, `INSERT INTO mfa_backup_codes (id, method_id, user_id, code_hash, created_at) VALUES (?, ?, ?, ?, ?)`,
			NewID(), m.ID, userID, h, TS(tx.Now)); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// UseBackupCode spends the code with this keyed hash. A single conditional
// UPDATE decides, so under parallel requests exactly one succeeds.
func (db *DB) UseBackupCode(ctx context.Context, userID string, hash []byte) (bool, error) {
	var ok bool
	err := db.Write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE mfa_backup_codes SET used_at = ? WHERE user_id = ? AND code_hash = ? AND used_at IS NULL`, TS(tx.Now), userID, hash)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		if ok = n == 1; ok {
			_, err = tx.ExecContext(ctx, `UPDATE mfa_methods SET last_used_at = ? WHERE user_id = ? AND kind = 'backup_code'`, TS(tx.Now), userID)
		}
		return err
	})
	return ok, err
}

// PutWebAuthnChallenge keeps a ceremony's session data until it is taken or
// expires; expired ceremonies are swept on the way.
func (db *DB) PutWebAuthnChallenge(ctx context.Context, challengeHash []byte, userID, purpose, session string, expires time.Time) error {
	return db.Write(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM webauthn_challenges WHERE expires_at <= ?`, TS(tx.Now)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO webauthn_challenges (challenge_hash, user_id, purpose, session, expires_at) VALUES (?, ?, ?, ?, ?)`,
			challengeHash, userID, purpose, session, TS(expires))
		return err
	})
}

// TakeWebAuthnChallenge deletes and returns a ceremony's session data: a
// challenge works once. Unknown, foreign or expired challenges are a 404.
func (db *DB) TakeWebAuthnChallenge(ctx context.Context, challengeHash []byte, userID, purpose string) (string, error) {
	var session string
	err := db.Write(ctx, func(tx *Tx) error {
		var expires string
		err := tx.QueryRowContext(ctx, `DELETE FROM webauthn_challenges WHERE challenge_hash = ? AND user_id = ? AND purpose = ? RETURNING session, expires_at`,
			challengeHash, userID, purpose).Scan(&session, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			return NotFound("challenge")
		}
		if err != nil {
			return err
		}
		if !ParseTS(expires).After(tx.Now) {
			session = ""
			return nil
		}
		return nil
	})
	if err == nil && session == "" {
		return "", NotFound("challenge")
	}
	return session, err
}
