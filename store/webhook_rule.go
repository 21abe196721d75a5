package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// WebhookRule routes a task's webhook events: when Condition (an
// expression, compiled by the server on save) matches, TargetTaskID runs,
// or an approval opens first when RequiresApproval.
type WebhookRule struct {
	ID               string
	OrgID            string
	ProjectID        string
	TaskID           string // the webhook the rule belongs to
	Name             string
	Priority         int
	Condition        string
	TargetTaskID     string
	RequiresApproval bool
	Enabled          bool
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

const webhookRuleCols = `id, org_id, project_id, task_id, name, priority, condition, target_task_id, requires_approval,
	enabled, created_at, updated_at`

func scanWebhookRule(row interface{ Scan(...any) error }) (*WebhookRule, error) {
	var r WebhookRule
	var created, updated string
	err := row.Scan(&r.ID, &r.OrgID, &r.ProjectID, &r.TaskID, &r.Name, &r.Priority, &r.Condition, &r.TargetTaskID,
		&r.RequiresApproval, &r.Enabled, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("routing rule")
	}
	if err != nil {
		return nil, err
	}
	r.CreatedAt, r.UpdatedAt = ParseTS(created), ParseTS(updated)
	return &r, nil
}

// FindWebhookRules lists a webhook's rules in evaluation order.
func (db *DB) FindWebhookRules(ctx context.Context, orgID, projectID, taskID string) ([]WebhookRule, error) {
	return findWebhookRules(ctx, db.r, orgID, projectID, taskID)
}

func findWebhookRules(ctx context.Context, q Querier, orgID, projectID, taskID string) ([]WebhookRule, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+webhookRuleCols+` FROM webhook_rules WHERE task_id = ? AND org_id = ? AND project_id = ?
		ORDER BY priority, created_at, id`, taskID, orgID, projectID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out, err := collectRows(rows, scanWebhookRule)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FindWebhookRule returns one rule of a webhook.
func (db *DB) FindWebhookRule(ctx context.Context, orgID, projectID, taskID, id string) (*WebhookRule, error) {
	return scanWebhookRule(db.r.QueryRowContext(ctx, `SELECT `+webhookRuleCols+` FROM webhook_rules
		WHERE id = ? AND task_id = ? AND org_id = ? AND project_id = ?`, id, taskID, orgID, projectID))
}

// maxRulesPerWebhook bounds evaluation work per delivery.
const maxRulesPerWebhook = 50

// SaveWebhookRule creates (ID "") or replaces a rule. The webhook and the
// target task must both exist in the rule's project.
func (db *DB) SaveWebhookRule(ctx context.Context, r *WebhookRule) error {
	return db.Write(ctx, func(tx *Tx) error {
		if _, err := findWebhook(ctx, tx, r.OrgID, r.ProjectID, r.TaskID); err != nil {
			return err
		}
		if _, err := findTask(ctx, tx, r.OrgID, r.ProjectID, r.TargetTaskID); err != nil {
			return &Error{Code: EInvalid, Message: "target task not found in this project", Reason: "target_task_not_found"}
		}
		r.UpdatedAt = tx.Now
		if r.ID == "" {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM webhook_rules WHERE task_id = ?`, r.TaskID).Scan(&n); err != nil {
				return err
			}
			if n >= maxRulesPerWebhook {
				return &Error{Code: EConflict, Message: "a webhook has at most 50 routing rules", Reason: "too_many_rules"}
			}
			r.ID, r.CreatedAt = NewID(), tx.Now
			_, err := tx.ExecContext(ctx, `INSERT INTO webhook_rules (`+webhookRuleCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`,
				r.ID, r.OrgID, r.ProjectID, r.TaskID, r.Name, r.Priority, r.Condition, r.TargetTaskID, r.RequiresApproval,
				r.Enabled, TS(r.CreatedAt), TS(r.UpdatedAt))
			return err
		}
		return execOne(ctx, tx, "routing rule", `UPDATE webhook_rules SET name = ?, priority = ?, condition = ?, target_task_id = ?,
			requires_approval = ?, enabled = ?, updated_at = ? WHERE id = ? AND task_id = ? AND org_id = ? AND project_id = ?`,
			r.Name, r.Priority, r.Condition, r.TargetTaskID, r.RequiresApproval, r.Enabled, TS(r.UpdatedAt), r.ID, r.TaskID,
			r.OrgID, r.ProjectID)
	})
}

// DeleteWebhookRule removes one rule.
func (db *DB) DeleteWebhookRule(ctx context.Context, orgID, projectID, taskID, id string) error {
	return db.Write(ctx, func(tx *Tx) error {
		return execOne(ctx, tx, "routing rule", `DELETE FROM webhook_rules WHERE id = ? AND task_id = ? AND org_id = ? AND project_id = ?`,
			id, taskID, orgID, projectID)
	})
}
