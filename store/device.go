package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Device grant states (RFC 8628 device authorization).
const (
	GrantPending  = "pending"
	GrantApproved = "approved"
	GrantDenied   = "denied"
	GrantConsumed = "consumed"
)

// DeviceGrant is a pending or decided command-line sign-in. Only a hash of the
// device code is kept; the user code is short and looked up normalised.
type DeviceGrant struct {
	ID             string
	DeviceCodeHash []byte
	UserCode       string
	ClientName     string
	IP             string
	UserAgent      string
	Status         string
	UserID         string
	OrgID          string
	SessionID      string
	Interval       int
	LastPolledAt   *time.Time
	ExpiresAt      time.Time
	DecidedAt      *time.Time
	CreatedAt      time.Time
}

const grantCols = `id, device_code_hash, user_code, client_name, ip, user_agent, status, user_id, org_id, session_id,
	interval_seconds, last_polled_at, expires_at, decided_at, created_at`

func scanGrant(row interface{ Scan(...any) error }) (*DeviceGrant, error) {
	var g DeviceGrant
	var user, org, sess, polled, decided sql.NullString
	var expires, created string
	err := row.Scan(&g.ID, &g.DeviceCodeHash, &g.UserCode, &g.ClientName, &g.IP, &g.UserAgent, &g.Status, &user, &org, &sess,
		&g.Interval, &polled, &expires, &decided, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("grant")
	}
	if err != nil {
		return nil, err
	}
	g.UserID, g.OrgID, g.SessionID = user.String, org.String, sess.String
	g.LastPolledAt, g.DecidedAt = scanNullTS(polled), scanNullTS(decided)
	g.ExpiresAt, g.CreatedAt = ParseTS(expires), ParseTS(created)
	return &g, nil
}

// CreateDeviceGrant inserts g (pending). A user-code collision is EConflict so
// the caller can draw another code. Grants expired for a day are swept.
func (db *DB) CreateDeviceGrant(ctx context.Context, g *DeviceGrant) error {
	return db.Write(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM device_grants WHERE expires_at <= ?`, TS(tx.Now.Add(-24*time.Hour))); err != nil {
			return err
		}
		g.ID, g.Status, g.CreatedAt = NewID(), GrantPending, tx.Now
		_, err := tx.ExecContext(ctx, `INSERT INTO device_grants (id, device_code_hash, user_code, client_name, ip, user_agent, status,
			interval_seconds, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			g.ID, g.DeviceCodeHash, g.UserCode, g.ClientName, g.IP, g.UserAgent, g.Status, g.Interval, TS(g.ExpiresAt), TS(tx.Now))
		if isUnique(err) {
			return &Error{Code: EConflict, Message: "user code collision", Reason: "user_code_collision"}
		}
		return err
	})
}

// FindDeviceGrantByUserCode reads a grant that has not expired.
func (db *DB) FindDeviceGrantByUserCode(ctx context.Context, userCode string) (*DeviceGrant, error) {
	return scanGrant(db.r.QueryRowContext(ctx, `SELECT `+grantCols+` FROM device_grants WHERE user_code = ? AND expires_at > ?`, userCode, TS(db.Now())))
}

// DecideDeviceGrant approves (for userID acting in orgID) or denies a pending,
// unexpired grant. A grant already decided is EConflict: it cannot be redeemed
// again; an unknown or expired one is a 404.
func (db *DB) DecideDeviceGrant(ctx context.Context, userCode string, approve bool, userID, orgID string) error {
	status := GrantDenied
	if approve {
		status = GrantApproved
	}
	return db.Write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE device_grants SET status = ?, user_id = ?, org_id = ?, decided_at = ?
			WHERE user_code = ? AND status = 'pending' AND expires_at > ?`, status, userID, orgID, TS(tx.Now), userCode, TS(tx.Now))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil
		}
		var st string
		err = tx.QueryRowContext(ctx, `SELECT status FROM device_grants WHERE user_code = ? AND expires_at > ?`, userCode, TS(tx.Now)).Scan(&st)
		if errors.Is(err, sql.ErrNoRows) {
			return NotFound("grant")
		}
		if err != nil {
			return err
		}
		return &Error{Code: EConflict, Message: "this sign-in request was already " + st, Reason: "grant_already_decided"}
	})
}

// findDeviceGrantByCodeTx reads a grant by its device-code hash (any state).
func findDeviceGrantByCodeTx(ctx context.Context, tx *Tx, hash []byte) (*DeviceGrant, error) {
	return scanGrant(tx.QueryRowContext(ctx, `SELECT `+grantCols+` FROM device_grants WHERE device_code_hash = ?`, hash))
}

// markDeviceGrantPolledTx stamps a poll and stores the (possibly raised) interval.
func markDeviceGrantPolledTx(ctx context.Context, tx *Tx, id string, interval int) error {
	_, err := tx.ExecContext(ctx, `UPDATE device_grants SET last_polled_at = ?, interval_seconds = ? WHERE id = ?`, TS(tx.Now), interval, id)
	return err
}

// consumeDeviceGrantTx moves an approved grant to consumed, recording the
// session it produced; it reports false when another poll got there first.
func consumeDeviceGrantTx(ctx context.Context, tx *Tx, id, sessionID string) (bool, error) {
	res, err := tx.ExecContext(ctx, `UPDATE device_grants SET status = 'consumed', session_id = ?, last_polled_at = ? WHERE id = ? AND status = 'approved'`,
		sessionID, TS(tx.Now), id)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}
