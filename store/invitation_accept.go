package store

import (
	"context"
	"time"
)

// ErrInviteMismatch refuses an invitation redeemed by another address than the one it was sent to.
var ErrInviteMismatch = &Error{Code: EForbidden, Message: "this invitation was sent to another address", Reason: "invitation_email_mismatch"}

// JoinByInvitation redeems an invitation for a signed-in user: the
// invitation must have been sent to email; the user joins its org with its
// role, the org becomes current and the caller's access token jti is
// blocklisted for ttl (a new one is issued in its place). It returns the
// invitation and the transaction's time.
func (db *DB) JoinByInvitation(ctx context.Context, tokenHash []byte, userID, email, jti string, ttl time.Duration) (*Invitation, time.Time, error) {
	var inv *Invitation
	var now time.Time
	err := db.Write(ctx, func(tx *Tx) error {
		var err error
		if inv, err = claimInvitationTx(ctx, tx, tokenHash); err != nil {
			return err
		}
		if inv.Email != NormalizeEmail(email) {
			return ErrInviteMismatch
		}
		if err := addMemberTx(ctx, tx, inv.OrgID, userID, inv.Role); err != nil {
			return err
		}
		if err := markInvitationAcceptedTx(ctx, tx, inv.ID, userID); err != nil {
			return err
		}
		now = tx.Now
		return switchOrgTx(ctx, tx, userID, inv.OrgID, jti, ttl)
	})
	return inv, now, err
}

// SignupByInvitation creates the invited account (its address counts as
// verified: the token came by mail to it) as a member of the inviting org,
// current there, and opens its first login session. u carries the name and
// password hash; the address is the invitation's. An address that already
// has an account is a conflict (account_exists: sign in and accept again).
func (db *DB) SignupByInvitation(ctx context.Context, tokenHash []byte, u *User, l *NewLogin) (*Invitation, time.Time, error) {
	var inv *Invitation
	var now time.Time
	err := db.Write(ctx, func(tx *Tx) error {
		var err error
		if inv, err = claimInvitationTx(ctx, tx, tokenHash); err != nil {
			return err
		}
		now = tx.Now
		u.Email, u.EmailVerifiedAt = inv.Email, &now
		if err := createUserTx(ctx, tx, u); err != nil {
			if ErrorCode(err) == EConflict {
				return &Error{Code: EConflict, Message: "an account with this address exists; sign in and accept the invitation again", Reason: "account_exists"}
			}
			return err
		}
		if err := addMemberTx(ctx, tx, inv.OrgID, u.ID, inv.Role); err != nil {
			return err
		}
		if err := markInvitationAcceptedTx(ctx, tx, inv.ID, u.ID); err != nil {
			return err
		}
		if err := setCurrentOrgTx(ctx, tx, u.ID, inv.OrgID); err != nil {
			return err
		}
		u.CurrentOrgID, l.UserID = inv.OrgID, u.ID
		return startLoginTx(ctx, tx, l)
	})
	return inv, now, err
}
