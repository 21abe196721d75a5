package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// ChannelLink ties a platform user to an opsagent account: only a linked
// user can approve, and then with the account's own role.
type ChannelLink struct {
	ID             string
	OrgID          string
	ChannelID      string
	ExternalUserID string
	ExternalName   string
	UserID         string
	UserEmail      string // filled by the reads
	CreatedAt      time.Time
}

// CreateChannelLinkCode stores the hash of a one-time link code for userID.
func (db *DB) CreateChannelLinkCode(ctx context.Context, orgID, channelID, userID, codeHash string, expires time.Time) error {
	return db.Write(ctx, func(tx *Tx) error {
		// One live code per person and channel: a new one replaces the last.
		if _, err := tx.ExecContext(ctx, `DELETE FROM channel_link_codes WHERE channel_id = ? AND user_id = ?`, channelID, userID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO channel_link_codes (code_hash, org_id, channel_id, user_id, expires_at, created_at)
			VALUES (?,?,?,?,?,?)`, codeHash, orgID, channelID, userID, TS(expires), TS(tx.Now))
		return err
	})
}

// RedeemChannelLinkCode consumes a code sent to the bot on channelID and links
// the sender to the code's account (replacing an earlier link of the sender).
// A wrong, used or expired code is not found.
func (db *DB) RedeemChannelLinkCode(ctx context.Context, channelID, codeHash, externalUserID, externalName string) (*ChannelLink, error) {
	var out *ChannelLink
	err := db.Write(ctx, func(tx *Tx) error {
		var orgID, userID string
		err := tx.QueryRowContext(ctx, `SELECT org_id, user_id FROM channel_link_codes
			WHERE code_hash = ? AND channel_id = ? AND used_at IS NULL AND expires_at > ?`, codeHash, channelID, TS(tx.Now)).Scan(&orgID, &userID)
		if errors.Is(err, sql.ErrNoRows) {
			return NotFound("link code")
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE channel_link_codes SET used_at = ? WHERE code_hash = ?`, TS(tx.Now), codeHash); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM channel_links WHERE channel_id = ? AND external_user_id = ?`, channelID, externalUserID); err != nil {
			return err
		}
		l := &ChannelLink{ID: NewID(), OrgID: orgID, ChannelID: channelID, ExternalUserID: externalUserID, ExternalName: externalName,
			UserID: userID, CreatedAt: tx.Now}
		if _, err := tx.ExecContext(ctx, `INSERT INTO channel_links (id, org_id, channel_id, external_user_id, external_name, user_id, created_at)
			VALUES (?,?,?,?,?,?,?)`, l.ID, l.OrgID, l.ChannelID, l.ExternalUserID, l.ExternalName, l.UserID, TS(tx.Now)); err != nil {
			return err
		}
		out = l
		return nil
	})
	return out, err
}

const channelLinkCols = `l.id, l.org_id, l.channel_id, l.external_user_id, l.external_name, l.user_id, u.email, l.created_at`

func scanChannelLink(row interface{ Scan(...any) error }) (*ChannelLink, error) {
	var l ChannelLink
	var created string
	if err := row.Scan(&l.ID, &l.OrgID, &l.ChannelID, &l.ExternalUserID, &l.ExternalName, &l.UserID, &l.UserEmail, &created); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, NotFound("channel link")
		}
		return nil, err
	}
	l.CreatedAt = ParseTS(created)
	return &l, nil
}

// FindChannelLink returns the account a platform user of channelID is linked to.
func (db *DB) FindChannelLink(ctx context.Context, channelID, externalUserID string) (*ChannelLink, error) {
	return scanChannelLink(db.r.QueryRowContext(ctx, `SELECT `+channelLinkCols+` FROM channel_links l JOIN users u ON u.id = l.user_id
		WHERE l.channel_id = ? AND l.external_user_id = ?`, channelID, externalUserID))
}

// FindChannelLinks lists the linked users of a channel of orgID.
func (db *DB) FindChannelLinks(ctx context.Context, orgID, channelID string) ([]ChannelLink, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+channelLinkCols+` FROM channel_links l JOIN users u ON u.id = l.user_id
		WHERE l.org_id = ? AND l.channel_id = ? ORDER BY l.created_at`, orgID, channelID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return collectRows(rows, scanChannelLink)
}

// DeleteChannelLink unlinks a platform user.
func (db *DB) DeleteChannelLink(ctx context.Context, orgID, channelID, id string) error {
	return db.Write(ctx, func(tx *Tx) error {
		return execOne(ctx, tx, "channel link", `DELETE FROM channel_links WHERE id = ? AND org_id = ? AND channel_id = ?`, id, orgID, channelID)
	})
}
