package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// AuthSession is a login session: one refresh-token family.
type AuthSession struct {
	ID              string
	UserID          string
	Salt            []byte
	Generation      int
	RefreshHash     []byte
	PrevRefreshHash []byte
	RotatedAt       *time.Time
	UserAgent       string
	IP              string
	Kind            string
	CreatedAt       time.Time
	LastUsedAt      time.Time
	ExpiresAt       time.Time
	RevokedAt       *time.Time
	RevokeReason    string
}

const authSessionCols = `id, user_id, salt, generation, refresh_hash, prev_refresh_hash, rotated_at, user_agent, ip, kind,
	created_at, last_used_at, expires_at, revoked_at, revoke_reason`

func scanAuthSession(row interface{ Scan(...any) error }) (*AuthSession, error) {
	var s AuthSession
	var rotated, revoked sql.NullString
	var created, used, expires string
	err := row.Scan(&s.ID, &s.UserID, &s.Salt, &s.Generation, &s.RefreshHash, &s.PrevRefreshHash, &rotated, &s.UserAgent, &s.IP, &s.Kind,
		&created, &used, &expires, &revoked, &s.RevokeReason)
	if err != nil {
		return nil, err
	}
	s.RotatedAt, s.RevokedAt = scanNullTS(rotated), scanNullTS(revoked)
	s.CreatedAt, s.LastUsedAt, s.ExpiresAt = ParseTS(created), ParseTS(used), ParseTS(expires)
	return &s, nil
}

// createAuthSessionTx inserts s (ID must be set by the caller, which derives the first token from it).
func createAuthSessionTx(ctx context.Context, tx *Tx, s *AuthSession) error {
	s.CreatedAt, s.LastUsedAt = tx.Now, tx.Now
	if s.Kind == "" {
		s.Kind = "web"
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO auth_sessions (`+authSessionCols+`) VALUES (?, ?, ?, ?, ?, NULL, NULL, ?, ?, ?, ?, ?, ?, NULL, '')`,
		s.ID, s.UserID, s.Salt, s.Generation, s.RefreshHash, s.UserAgent, s.IP, s.Kind, TS(tx.Now), TS(tx.Now), TS(s.ExpiresAt))
	return err
}

// FindAuthSessionByID reads a session (revoked ones too) of any user.
func (db *DB) FindAuthSessionByID(ctx context.Context, id string) (*AuthSession, error) {
	s, err := scanAuthSession(db.r.QueryRowContext(ctx, `SELECT `+authSessionCols+` FROM auth_sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("session")
	}
	return s, err
}

// findAuthSessionTx reads a session inside a write transaction.
func findAuthSessionTx(ctx context.Context, tx *Tx, id string) (*AuthSession, error) {
	s, err := scanAuthSession(tx.QueryRowContext(ctx, `SELECT `+authSessionCols+` FROM auth_sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("session")
	}
	return s, err
}

// rotateAuthSessionTx moves the session to its next refresh token.
func rotateAuthSessionTx(ctx context.Context, tx *Tx, id string, newGen int, newHash, prevHash []byte, ip, ua string) error {
	_, err := tx.ExecContext(ctx, `UPDATE auth_sessions SET generation = ?, refresh_hash = ?, prev_refresh_hash = ?,
		rotated_at = ?, last_used_at = ?, ip = ?, user_agent = ? WHERE id = ? AND revoked_at IS NULL`,
		newGen, newHash, prevHash, TS(tx.Now), TS(tx.Now), ip, ua, id)
	return err
}

// revokeAuthSessionTx revokes one session; revoking twice is harmless.
func revokeAuthSessionTx(ctx context.Context, tx *Tx, id, reason string) error {
	_, err := tx.ExecContext(ctx, `UPDATE auth_sessions SET revoked_at = COALESCE(revoked_at, ?), revoke_reason = CASE WHEN revoked_at IS NULL THEN ? ELSE revoke_reason END WHERE id = ?`, TS(tx.Now), reason, id)
	return err
}

// RevokeUserAuthSession revokes a session only if it belongs to userID.
func (db *DB) RevokeUserAuthSession(ctx context.Context, userID, id string) error {
	return db.Write(ctx, func(tx *Tx) error {
		return execOne(ctx, tx, "session", `UPDATE auth_sessions SET revoked_at = ?, revoke_reason = 'deleted' WHERE id = ? AND user_id = ? AND revoked_at IS NULL`, TS(tx.Now), id, userID)
	})
}

// FindActiveAuthSessions lists a user's live sessions, newest use first.
func (db *DB) FindActiveAuthSessions(ctx context.Context, userID string) ([]*AuthSession, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+authSessionCols+` FROM auth_sessions
		WHERE user_id = ? AND revoked_at IS NULL AND expires_at > ? ORDER BY last_used_at DESC`, userID, TS(db.Now()))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*AuthSession
	for rows.Next() {
		s, err := scanAuthSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// revokeTokenTx blocklists an access-token id until it would have expired anyway.
func revokeTokenTx(ctx context.Context, tx *Tx, jti string, expires time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO revoked_tokens (jti, expires_at) VALUES (?, ?) ON CONFLICT DO NOTHING`, jti, TS(expires))
	return err
}

// RevokedTokens returns the blocklist entries that have not expired yet (loaded at start).
func (db *DB) RevokedTokens(ctx context.Context) (map[string]time.Time, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT jti, expires_at FROM revoked_tokens WHERE expires_at > ?`, TS(db.Now()))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var j, e string
		if err := rows.Scan(&j, &e); err != nil {
			return nil, err
		}
		out[j] = ParseTS(e)
	}
	return out, rows.Err()
}

// PurgeExpired deletes what can no longer matter: blocklisted tokens past
// their expiry, mailed tokens, WebAuthn (second-factor) challenges and
// device grants a day past theirs (the day lets "this link expired" still
// be told apart from "unknown"), and login sessions a month past theirs.
func (db *DB) PurgeExpired(ctx context.Context) error {
	return db.Write(ctx, func(tx *Tx) error {
		dayAgo := TS(tx.Now.Add(-24 * time.Hour))
		for _, q := range []struct {
			sql, before string
		}{
			{`DELETE FROM revoked_tokens WHERE expires_at <= ?`, TS(tx.Now)},
			{`DELETE FROM email_tokens WHERE expires_at <= ?`, dayAgo},
			{`DELETE FROM webauthn_challenges WHERE expires_at <= ?`, TS(tx.Now)},
			{`DELETE FROM device_grants WHERE expires_at <= ?`, dayAgo},
			{`DELETE FROM auth_sessions WHERE expires_at <= ?`, TS(tx.Now.Add(-30 * 24 * time.Hour))},
		} {
			if _, err := tx.ExecContext(ctx, q.sql, q.before); err != nil {
				return err
			}
		}
		return nil
	})
}

// Principal is what the authenticator needs about a bearer of an access token,
// read in one query: the user, the session state and the role in the token's org.
type Principal struct {
	UserID           string
	Email            string
	TokensValidAfter time.Time
	SessionRevoked   bool
	SessionExpires   time.Time
	Role             string // "" when not (or no longer) a member of the org
}

// FindPrincipal resolves a session-bound access token. It runs on every
// authenticated request, so it goes through the prepared-statement cache.
//
// The answer is cached (readcache.go): a change to the user, the session or
// the membership (logout, logout-all's epoch, a role change, removal,
// deletion) invalidates it before the writing request answers.
func (db *DB) FindPrincipal(ctx context.Context, userID, sessionID, orgID string) (*Principal, error) {
	p, err := cached(ctx, db.principals, userID+"|"+sessionID+"|"+orgID, func(ctx context.Context) (Principal, error) {
		p, err := db.findPrincipal(ctx, userID, sessionID, orgID)
		if err != nil {
			return Principal{}, err
		}
		return *p, nil
	})
	if err != nil {
		return nil, err
	}
	return &p, nil
}

func (db *DB) findPrincipal(ctx context.Context, userID, sessionID, orgID string) (*Principal, error) {
	var p Principal
	var valid, expires string
	var revoked sql.NullString
	var role sql.NullString
	err := db.readRow(ctx, `SELECT u.id, u.email, u.tokens_valid_after, s.revoked_at, s.expires_at, m.role
		FROM users u JOIN auth_sessions s ON s.id = ? AND s.user_id = u.id
		LEFT JOIN org_members m ON m.org_id = ? AND m.user_id = u.id
		WHERE u.id = ? AND u.deleted_at IS NULL`, sessionID, orgID, userID).
		Scan(&p.UserID, &p.Email, &valid, &revoked, &expires, &role)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("principal")
	}
	if err != nil {
		return nil, err
	}
	p.TokensValidAfter = ParseTS(valid)
	p.SessionRevoked = revoked.Valid
	p.SessionExpires = ParseTS(expires)
	p.Role = role.String
	return &p, nil
}
