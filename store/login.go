package store

import (
	"context"
	"time"
)

// NewLogin is a login session to open. The caller picks ID and Salt and signs
// the first refresh token over them, so only the token's hash reaches the
// database. UserID is filled in by the flows that create the user.
type NewLogin struct {
	ID          string
	UserID      string
	Salt        []byte
	RefreshHash []byte
	UserAgent   string
	IP          string
	Kind        string // web or cli
	TTL         time.Duration
}

// startLoginTx opens the session and records the sign-in.
func startLoginTx(ctx context.Context, tx *Tx, l *NewLogin) error {
	s := &AuthSession{ID: l.ID, UserID: l.UserID, Salt: l.Salt, RefreshHash: l.RefreshHash, UserAgent: l.UserAgent,
		IP: l.IP, Kind: l.Kind, ExpiresAt: tx.Now.Add(l.TTL)}
	if err := createAuthSessionTx(ctx, tx, s); err != nil {
		return err
	}
	return touchLoginTx(ctx, tx, l.UserID)
}

// StartLogin opens a login session for a user who passed every factor. It
// returns the transaction's time, which the access token is issued at.
func (db *DB) StartLogin(ctx context.Context, l *NewLogin) (time.Time, error) {
	var now time.Time
	err := db.Write(ctx, func(tx *Tx) error {
		now = tx.Now
		return startLoginTx(ctx, tx, l)
	})
	return now, err
}

// CreateAccount creates u (id and times filled in) with the personal
// organization every account owns, made its current one.
func (db *DB) CreateAccount(ctx context.Context, u *User) (*Organization, error) {
	var org *Organization
	err := db.Write(ctx, func(tx *Tx) error {
		var err error
		org, err = createAccountTx(ctx, tx, u)
		return err
	})
	return org, err
}

func createAccountTx(ctx context.Context, tx *Tx, u *User) (*Organization, error) {
	if err := createUserTx(ctx, tx, u); err != nil {
		return nil, err
	}
	org, err := createPersonalOrgTx(ctx, tx, u)
	if err != nil {
		return nil, err
	}
	u.CurrentOrgID = org.ID
	return org, nil
}

// Register is self-service sign-up: the account, its personal organization
// and its first login session, all or nothing. It returns the time the
// session was opened.
func (db *DB) Register(ctx context.Context, u *User, l *NewLogin) (time.Time, error) {
	var now time.Time
	err := db.Write(ctx, func(tx *Tx) error {
		if _, err := createAccountTx(ctx, tx, u); err != nil {
			return err
		}
		now, l.UserID = tx.Now, u.ID
		return startLoginTx(ctx, tx, l)
	})
	return now, err
}

// EndLogin is logout: the login session sid (if known) is revoked and the
// access token jti (if any) blocklisted until exp.
func (db *DB) EndLogin(ctx context.Context, sid, jti string, exp time.Time) error {
	return db.Write(ctx, func(tx *Tx) error {
		if sid != "" {
			if err := revokeAuthSessionTx(ctx, tx, sid, "logout"); err != nil {
				return err
			}
		}
		if jti != "" {
			return revokeTokenTx(ctx, tx, jti, exp)
		}
		return nil
	})
}

// EndAllLogins is logout-all: every session of the user revoked, the token
// epoch moved (which also voids their API keys) and the caller's own access
// token jti blocklisted for ttl.
func (db *DB) EndAllLogins(ctx context.Context, userID, jti string, ttl time.Duration) error {
	return db.Write(ctx, func(tx *Tx) error {
		if err := revokeAllForUserTx(ctx, tx, userID, "logout_all"); err != nil {
			return err
		}
		return revokeTokenTx(ctx, tx, jti, tx.Now.Add(ttl))
	})
}

// RevokeToken blocklists an access-token id until exp (a spent MFA token).
func (db *DB) RevokeToken(ctx context.Context, jti string, exp time.Time) error {
	return db.Write(ctx, func(tx *Tx) error { return revokeTokenTx(ctx, tx, jti, exp) })
}

// SwitchOrg moves a login session to orgID: the org becomes the user's
// current one and the old access token jti is blocklisted for ttl (the
// lifetime of the token issued in its place). It returns the transaction's
// time, which the new token is issued at.
func (db *DB) SwitchOrg(ctx context.Context, userID, orgID, jti string, ttl time.Duration) (time.Time, error) {
	var now time.Time
	err := db.Write(ctx, func(tx *Tx) error {
		now = tx.Now
		return switchOrgTx(ctx, tx, userID, orgID, jti, ttl)
	})
	return now, err
}

func switchOrgTx(ctx context.Context, tx *Tx, userID, orgID, jti string, ttl time.Duration) error {
	if err := setCurrentOrgTx(ctx, tx, userID, orgID); err != nil {
		return err
	}
	return revokeTokenTx(ctx, tx, jti, tx.Now.Add(ttl))
}
