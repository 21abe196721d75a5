package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// ChannelTarget is where a task's runs post their approvals and outcome.
type ChannelTarget struct {
	ID           string
	OrgID        string
	ProjectID    string
	ChannelID    string
	TargetType   string // task
	TargetID     string
	Conversation string // Slack channel id, Telegram chat id, WhatsApp number
	CreatedAt    time.Time
}

// SetChannelTarget makes t the chat target of its task (replacing one set
// before). The channel must be of the same project.
func (db *DB) SetChannelTarget(ctx context.Context, t *ChannelTarget) error {
	return db.Write(ctx, func(tx *Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM channels WHERE id = ? AND org_id = ? AND project_id = ?`,
			t.ChannelID, t.OrgID, t.ProjectID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return NotFound("channel")
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM channel_targets WHERE project_id = ? AND target_type = ? AND target_id = ?`,
			t.ProjectID, t.TargetType, t.TargetID); err != nil {
			return err
		}
		t.ID, t.CreatedAt = NewID(), tx.Now
		_, err := tx.ExecContext(ctx, `INSERT INTO channel_targets (id, org_id, project_id, channel_id, target_type, target_id, conversation, created_at)
			VALUES (?,?,?,?,?,?,?,?)`, t.ID, t.OrgID, t.ProjectID, t.ChannelID, t.TargetType, t.TargetID, t.Conversation, TS(tx.Now))
		return err
	})
}

// FindChannelTarget returns the chat target of a task of the tenant's project.
func (db *DB) FindChannelTarget(ctx context.Context, orgID, projectID, targetType, targetID string) (*ChannelTarget, error) {
	var t ChannelTarget
	var created string
	err := db.r.QueryRowContext(ctx, `SELECT id, org_id, project_id, channel_id, target_type, target_id, conversation, created_at
		FROM channel_targets WHERE org_id = ? AND project_id = ? AND target_type = ? AND target_id = ?`, orgID, projectID, targetType, targetID).
		Scan(&t.ID, &t.OrgID, &t.ProjectID, &t.ChannelID, &t.TargetType, &t.TargetID, &t.Conversation, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("channel target")
	}
	t.CreatedAt = ParseTS(created)
	return &t, err
}

// DeleteChannelTarget removes a task's chat target.
func (db *DB) DeleteChannelTarget(ctx context.Context, orgID, projectID, targetType, targetID string) error {
	return db.Write(ctx, func(tx *Tx) error {
		return execOne(ctx, tx, "channel target", `DELETE FROM channel_targets WHERE org_id = ? AND project_id = ? AND target_type = ? AND target_id = ?`,
			orgID, projectID, targetType, targetID)
	})
}

// FindRuleTarget returns the chat target of a routing rule by the rule's id
// alone: the caller has the id from the server's own dispatch.
func (db *DB) FindRuleTarget(ctx context.Context, ruleID string) (*ChannelTarget, error) {
	var t ChannelTarget
	var created string
	err := db.r.QueryRowContext(ctx, `SELECT id, org_id, project_id, channel_id, target_type, target_id, conversation, created_at
		FROM channel_targets WHERE target_type = 'rule' AND target_id = ?`, ruleID).
		Scan(&t.ID, &t.OrgID, &t.ProjectID, &t.ChannelID, &t.TargetType, &t.TargetID, &t.Conversation, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("channel target")
	}
	t.CreatedAt = ParseTS(created)
	return &t, err
}

// SetSessionTarget records the chat a run posts to (its rule's target).
func (db *DB) SetSessionTarget(ctx context.Context, sessionID, channelID, conversation string) error {
	return db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO channel_session_targets (session_id, channel_id, conversation, created_at)
			VALUES (?,?,?,?)`, sessionID, channelID, conversation, TS(tx.Now))
		return err
	})
}

// FindSessionTarget returns the chat channel and conversation a run posts to.
func (db *DB) FindSessionTarget(ctx context.Context, sessionID string) (channelID, conversation string, err error) {
	err = db.r.QueryRowContext(ctx, `SELECT channel_id, conversation FROM channel_session_targets WHERE session_id = ?`, sessionID).
		Scan(&channelID, &conversation)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", NotFound("channel target")
	}
	return channelID, conversation, err
}
