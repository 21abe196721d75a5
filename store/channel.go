package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Chat channel platforms; a session started from one carries it as its source.
const (
	PlatformSlack    = "slack"
	PlatformTelegram = "telegram"
	PlatformWhatsApp = "whatsapp"
)

// MaxChannelsPerProject caps how many channels one project keeps.
const MaxChannelsPerProject = 20

// Channel is a project's connection to a chat platform. Credentials is the
// vault ciphertext of the platform secrets (never plaintext here); Config is
// the JSON of the non-secret settings.
type Channel struct {
	ID          string
	OrgID       string
	ProjectID   string
	Platform    string
	Name        string
	Enabled     bool
	Config      string
	Credentials []byte
	CredKeyID   string
	Ignored     int64 // messages from chats not allowed
	CreatedBy   string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// ChannelPatch changes a channel; nil fields stay.
type ChannelPatch struct {
	Name    *string
	Enabled *bool
	Config  *string
}

// Sealer encrypts a channel's credentials inside the write transaction that
// stores them (the vault keyring is reloaded there after a rotation).
type Sealer func(channelID string) (ct []byte, keyID string, err error)

const channelCols = `id, org_id, project_id, platform, name, enabled, config, credentials_ct, credentials_key_id,
	ignored_count, COALESCE(created_by, ''), created_at, updated_at`

func scanChannel(row interface{ Scan(...any) error }) (*Channel, error) {
	var c Channel
	var created, updated string
	if err := row.Scan(&c.ID, &c.OrgID, &c.ProjectID, &c.Platform, &c.Name, &c.Enabled, &c.Config, &c.Credentials,
		&c.CredKeyID, &c.Ignored, &c.CreatedBy, &created, &updated); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, NotFound("channel")
		}
		return nil, err
	}
	c.CreatedAt, c.UpdatedAt = ParseTS(created), ParseTS(updated)
	return &c, nil
}

// CreateChannel stores c with the credentials seal encrypts.
func (db *DB) CreateChannel(ctx context.Context, c *Channel, seal Sealer) error {
	return db.Write(ctx, func(tx *Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM channels WHERE project_id = ?`, c.ProjectID).Scan(&n); err != nil {
			return err
		}
		if n >= MaxChannelsPerProject {
			return &Error{Code: EConflict, Message: "this project has the most channels allowed", Reason: "channel_limit"}
		}
		if err := tx.CheckQuota(ctx, QuotaChannels, c.OrgID, 1); err != nil {
			return err
		}
		c.ID = NewID()
		ct, kid, err := seal(c.ID)
		if err != nil {
			return err
		}
		c.Credentials, c.CredKeyID, c.CreatedAt, c.UpdatedAt = ct, kid, tx.Now, tx.Now
		if c.Config == "" {
			c.Config = "{}"
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO channels (id, org_id, project_id, platform, name, enabled, config, credentials_ct,
			credentials_key_id, ignored_count, created_by, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			c.ID, c.OrgID, c.ProjectID, c.Platform, c.Name, c.Enabled, c.Config, c.Credentials, c.CredKeyID, 0,
			nullStr(c.CreatedBy), TS(tx.Now), TS(tx.Now))
		if isUnique(err) {
			return &Error{Code: EConflict, Message: "a channel with this name exists in the project", Reason: "channel_name_taken"}
		}
		return err
	})
}

// FindChannels lists a project's channels by name.
func (db *DB) FindChannels(ctx context.Context, orgID, projectID string) ([]Channel, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+channelCols+` FROM channels WHERE org_id = ? AND project_id = ? ORDER BY name`, orgID, projectID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return collectRows(rows, scanChannel)
}

// FindChannel returns a channel of the tenant's project.
func (db *DB) FindChannel(ctx context.Context, orgID, projectID, id string) (*Channel, error) {
	return scanChannel(db.r.QueryRowContext(ctx, `SELECT `+channelCols+` FROM channels WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID))
}

// FindInboundChannel returns an enabled channel by id alone: the inbound
// routes know nothing else until the platform's signature is verified
// against the channel's own secret.
func (db *DB) FindInboundChannel(ctx context.Context, id string) (*Channel, error) {
	return scanChannel(db.r.QueryRowContext(ctx, `SELECT `+channelCols+` FROM channels WHERE id = ? AND enabled = 1`, id))
}

// UpdateChannel applies p (and new credentials when seal is not nil).
func (db *DB) UpdateChannel(ctx context.Context, orgID, projectID, id string, p ChannelPatch, seal Sealer) (*Channel, error) {
	var out *Channel
	err := db.Write(ctx, func(tx *Tx) error {
		c, err := scanChannel(tx.QueryRowContext(ctx, `SELECT `+channelCols+` FROM channels WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID))
		if err != nil {
			return err
		}
		if p.Name != nil {
			c.Name = *p.Name
		}
		if p.Enabled != nil {
			c.Enabled = *p.Enabled
		}
		if p.Config != nil {
			c.Config = *p.Config
		}
		if seal != nil {
			if c.Credentials, c.CredKeyID, err = seal(c.ID); err != nil {
				return err
			}
		}
		c.UpdatedAt = tx.Now
		_, err = tx.ExecContext(ctx, `UPDATE channels SET name = ?, enabled = ?, config = ?, credentials_ct = ?, credentials_key_id = ?,
			updated_at = ? WHERE id = ?`, c.Name, c.Enabled, c.Config, c.Credentials, c.CredKeyID, TS(tx.Now), c.ID)
		if isUnique(err) {
			return &Error{Code: EConflict, Message: "a channel with this name exists in the project", Reason: "channel_name_taken"}
		}
		out = c
		return err
	})
	return out, err
}

// DeleteChannel removes a channel with its threads, links and deliveries
// (the sessions stay, readable in the console).
func (db *DB) DeleteChannel(ctx context.Context, orgID, projectID, id string) error {
	return db.Write(ctx, func(tx *Tx) error {
		return execOne(ctx, tx, "channel", `DELETE FROM channels WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID)
	})
}

// CountIgnoredMessage counts a message from a chat the channel does not allow.
func (db *DB) CountIgnoredMessage(ctx context.Context, channelID string) error {
	return db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE channels SET ignored_count = ignored_count + 1 WHERE id = ?`, channelID)
		return err
	})
}
