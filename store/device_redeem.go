package store

import (
	"context"
	"time"
)

// What one poll of the device-token endpoint found (RFC 8628 section 3.5).
const (
	PollUnknown  = "unknown"   // no grant has this device code
	PollExpired  = "expired"   // the grant expired
	PollConsumed = "consumed"  // the grant already produced its session
	PollDenied   = "denied"    // the person refused
	PollPending  = "pending"   // no decision yet
	PollSlowDown = "slow_down" // no decision yet, and the client polls too fast: its interval grew by 5 s
	PollUserGone = "user_gone" // approved, but the approving account no longer exists
	PollIssued   = "issued"    // approved: the login session was opened
)

// DevicePoll is the outcome of a device-token poll; UserID, OrgID and Now
// are set when Outcome is PollIssued (the access token is issued at Now).
type DevicePoll struct {
	Outcome string
	UserID  string
	OrgID   string
	Now     time.Time
}

// RedeemDeviceGrant answers one poll for the grant of a device code. Every
// poll is stamped; one sooner than 3/4 of the interval after the previous
// gets PollSlowDown. An approved grant opens login l (in the org it was
// approved for, or the user's current one if they left it) exactly once: a
// concurrent poll that loses the race is EConflict.
func (db *DB) RedeemDeviceGrant(ctx context.Context, codeHash []byte, l *NewLogin) (*DevicePoll, error) {
	out := &DevicePoll{}
	err := db.Write(ctx, func(tx *Tx) error {
		g, err := findDeviceGrantByCodeTx(ctx, tx, codeHash)
		if IsNotFound(err) {
			out.Outcome = PollUnknown
			return nil
		}
		if err != nil {
			return err
		}
		if !tx.Now.Before(g.ExpiresAt) {
			out.Outcome = PollExpired
			return nil
		}
		interval := g.Interval
		tooFast := g.LastPolledAt != nil && tx.Now.Sub(*g.LastPolledAt) < time.Duration(interval)*time.Second*3/4
		switch g.Status {
		case GrantConsumed:
			out.Outcome = PollConsumed
			return nil
		case GrantDenied:
			out.Outcome = PollDenied
			return markDeviceGrantPolledTx(ctx, tx, g.ID, interval)
		case GrantPending:
			out.Outcome = PollPending
			if tooFast {
				interval += 5
				out.Outcome = PollSlowDown
			}
			return markDeviceGrantPolledTx(ctx, tx, g.ID, interval)
		}
		u, err := findUserTx(ctx, tx, g.UserID)
		if err != nil {
			out.Outcome = PollUserGone
			return nil
		}
		org := g.OrgID
		var role string
		if err := tx.QueryRowContext(ctx, `SELECT role FROM org_members WHERE org_id = ? AND user_id = ?`, org, u.ID).Scan(&role); err != nil || role == "" {
			if org, err = loginOrgTx(ctx, tx, u); err != nil {
				return err
			}
		}
		l.UserID = u.ID
		if err := startLoginTx(ctx, tx, l); err != nil {
			return err
		}
		won, err := consumeDeviceGrantTx(ctx, tx, g.ID, l.ID)
		if err != nil {
			return err
		}
		if !won {
			return Errorf(EConflict, "grant consumed concurrently")
		}
		out.Outcome, out.UserID, out.OrgID, out.Now = PollIssued, u.ID, org, tx.Now
		return nil
	})
	return out, err
}

// loginOrgTx picks the org a new access token acts in, as a refresh does
// (RefreshAuthSession, with its prepared statements): the user's current org
// if they are still a member, else their oldest membership (which becomes
// current).
func loginOrgTx(ctx context.Context, tx *Tx, u *User) (string, error) {
	if u.CurrentOrgID != "" {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM org_members WHERE org_id = ? AND user_id = ?`, u.CurrentOrgID, u.ID).Scan(&n); err != nil {
			return "", err
		}
		if n > 0 {
			return u.CurrentOrgID, nil
		}
	}
	var org string
	err := tx.QueryRowContext(ctx, queryOldestOrg, u.ID).Scan(&org) // the refresh's choice too
	if err != nil {
		return "", Errorf(EUnauthorized, "account has no organization")
	}
	return org, setCurrentOrgTx(ctx, tx, u.ID, org)
}
