package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

// Webhook is the receiver configuration of one task (spec 4.7). Secrets are
// vault ciphertexts: the store never sees a plaintext secret.
type Webhook struct {
	TaskID            string
	OrgID             string
	ProjectID         string
	Provider          string
	Scheme            string
	SecretCT          []byte
	SecretKeyID       string // vault key of SecretCT (store/ciphertext.go)
	PrevSecretCT      []byte
	PrevSecretKeyID   string
	PrevValidUntil    *time.Time
	Enabled           bool
	RoutingMode       string // first_match, fan_out
	RateLimit         int    // deliveries per minute
	DedupeSeconds     int
	RetentionDays     int
	MetadataOnly      bool
	RedactGlobs       []string
	Correlate         bool
	CorrelationWindow int // seconds
	ApprovalTTL       int // seconds
	BadgeToken        string
	SecretRotatedAt   *time.Time
	CreatedBy         string
	CreatedAt         time.Time
	UpdatedAt         time.Time
	// TaskEnabled is the task's own flag, read with the webhook.
	TaskEnabled bool
}

const webhookCols = `w.task_id, w.org_id, w.project_id, w.provider, w.scheme, w.secret_ct, w.secret_key_id, w.prev_secret_ct, w.prev_secret_key_id, w.prev_valid_until,
	w.enabled, w.routing_mode, w.rate_limit_per_minute, w.dedupe_window_seconds, w.retention_days, w.metadata_only,
	w.redact_globs, w.correlate, w.correlation_window_seconds, w.approval_ttl_seconds, w.badge_token, w.secret_rotated_at,
	w.created_by, w.created_at, w.updated_at, t.enabled`

func scanWebhook(row interface{ Scan(...any) error }) (*Webhook, error) {
	var w Webhook
	var prevUntil, rotated, createdBy sql.NullString
	var globs, created, updated string
	err := row.Scan(&w.TaskID, &w.OrgID, &w.ProjectID, &w.Provider, &w.Scheme, &w.SecretCT, &w.SecretKeyID, &w.PrevSecretCT, &w.PrevSecretKeyID, &prevUntil,
		&w.Enabled, &w.RoutingMode, &w.RateLimit, &w.DedupeSeconds, &w.RetentionDays, &w.MetadataOnly, &globs, &w.Correlate,
		&w.CorrelationWindow, &w.ApprovalTTL, &w.BadgeToken, &rotated, &createdBy, &created, &updated, &w.TaskEnabled)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("webhook")
	}
	if err != nil {
		return nil, err
	}
	_ = json.Unmarshal([]byte(globs), &w.RedactGlobs)
	if w.RedactGlobs == nil {
		w.RedactGlobs = []string{}
	}
	w.PrevValidUntil, w.SecretRotatedAt = scanNullTS(prevUntil), scanNullTS(rotated)
	w.CreatedBy, w.CreatedAt, w.UpdatedAt = createdBy.String, ParseTS(created), ParseTS(updated)
	return &w, nil
}

// FindWebhook returns the webhook of a task inside one project.
func (db *DB) FindWebhook(ctx context.Context, orgID, projectID, taskID string) (*Webhook, error) {
	return findWebhook(ctx, db.r, orgID, projectID, taskID)
}

func findWebhook(ctx context.Context, q Querier, orgID, projectID, taskID string) (*Webhook, error) {
	return scanWebhook(q.QueryRowContext(ctx, `SELECT `+webhookCols+` FROM webhooks w JOIN tasks t ON t.id = w.task_id
		WHERE w.task_id = ? AND w.org_id = ? AND w.project_id = ?`, taskID, orgID, projectID))
}

// FindWebhookForIngest returns a task's webhook by task id alone: the
// receiver has no tenant, the task id is the address. Callers must treat a
// disabled webhook or task exactly like an absent one.
func (db *DB) FindWebhookForIngest(ctx context.Context, taskID string) (*Webhook, error) {
	return scanWebhook(db.r.QueryRowContext(ctx, `SELECT `+webhookCols+` FROM webhooks w JOIN tasks t ON t.id = w.task_id
		WHERE w.task_id = ?`, taskID))
}

// FindWebhookByBadge returns the webhook whose badge token is token.
func (db *DB) FindWebhookByBadge(ctx context.Context, token string) (*Webhook, error) {
	return scanWebhook(db.r.QueryRowContext(ctx, `SELECT `+webhookCols+` FROM webhooks w JOIN tasks t ON t.id = w.task_id
		WHERE w.badge_token = ?`, token))
}

// SetWebhookSecret sets the secret fields of w (SecretCT, SecretKeyID,
// PrevSecretCT, PrevSecretKeyID, PrevValidUntil, SecretRotatedAt) inside the
// write transaction; old is the stored webhook, nil when w is new.
type SetWebhookSecret func(w, old *Webhook) error

// SaveWebhook creates or replaces the webhook of a task of the project
// (created reports which). The task must exist in the project.
//
// The secret fields of w are ignored: they keep their stored values unless
// setSecret is given, which runs inside the write transaction. Encrypting
// there (with a keyring reloaded in the transaction) and never writing back a
// ciphertext read before it is what keeps a vault rotation running in another
// process from missing a webhook secret: see secrets.Keeper.Rotate.
func (db *DB) SaveWebhook(ctx context.Context, w *Webhook, setSecret SetWebhookSecret) (created bool, err error) {
	err = db.Write(ctx, func(tx *Tx) error {
		if _, err := findTask(ctx, tx, w.OrgID, w.ProjectID, w.TaskID); err != nil {
			return err
		}
		globs, _ := json.Marshal(w.RedactGlobs)
		old, err := findWebhook(ctx, tx, w.OrgID, w.ProjectID, w.TaskID)
		switch {
		case IsNotFound(err):
			created, old = true, nil
			w.CreatedAt = tx.Now
		case err != nil:
			return err
		default:
			w.CreatedAt, w.BadgeToken, w.CreatedBy = old.CreatedAt, old.BadgeToken, old.CreatedBy
		}
		if old != nil {
			w.SecretCT, w.SecretKeyID, w.PrevSecretCT, w.PrevSecretKeyID = old.SecretCT, old.SecretKeyID, old.PrevSecretCT, old.PrevSecretKeyID
			w.PrevValidUntil, w.SecretRotatedAt = old.PrevValidUntil, old.SecretRotatedAt
		} else {
			w.SecretCT, w.SecretKeyID, w.PrevSecretCT, w.PrevSecretKeyID, w.PrevValidUntil, w.SecretRotatedAt = nil, "", nil, "", nil, nil
		}
		if setSecret != nil {
			if err := setSecret(w, old); err != nil {
				return err
			}
		}
		w.UpdatedAt = tx.Now
		if created {
			_, err = tx.ExecContext(ctx, `INSERT INTO webhooks (task_id, org_id, project_id, provider, scheme, secret_ct,
				secret_key_id, prev_secret_ct, prev_secret_key_id, prev_valid_until, enabled, routing_mode, rate_limit_per_minute,
				dedupe_window_seconds, retention_days, metadata_only, redact_globs, correlate, correlation_window_seconds,
				approval_ttl_seconds, badge_token, secret_rotated_at, created_by, created_at, updated_at)
				VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
				w.TaskID, w.OrgID, w.ProjectID, w.Provider, w.Scheme, w.SecretCT, w.SecretKeyID, w.PrevSecretCT, w.PrevSecretKeyID, nullTS(w.PrevValidUntil),
				w.Enabled, w.RoutingMode, w.RateLimit, w.DedupeSeconds, w.RetentionDays, w.MetadataOnly, string(globs),
				w.Correlate, w.CorrelationWindow, w.ApprovalTTL, w.BadgeToken, nullTS(w.SecretRotatedAt), nullStr(w.CreatedBy),
				TS(w.CreatedAt), TS(w.UpdatedAt))
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE webhooks SET provider = ?, scheme = ?, secret_ct = ?, secret_key_id = ?,
			prev_secret_ct = ?, prev_secret_key_id = ?, prev_valid_until = ?, enabled = ?, routing_mode = ?, rate_limit_per_minute = ?, dedupe_window_seconds = ?,
			retention_days = ?, metadata_only = ?, redact_globs = ?, correlate = ?, correlation_window_seconds = ?,
			approval_ttl_seconds = ?, secret_rotated_at = ?, updated_at = ? WHERE task_id = ? AND org_id = ? AND project_id = ?`,
			w.Provider, w.Scheme, w.SecretCT, w.SecretKeyID, w.PrevSecretCT, w.PrevSecretKeyID, nullTS(w.PrevValidUntil), w.Enabled, w.RoutingMode, w.RateLimit,
			w.DedupeSeconds, w.RetentionDays, w.MetadataOnly, string(globs), w.Correlate, w.CorrelationWindow, w.ApprovalTTL,
			nullTS(w.SecretRotatedAt), TS(w.UpdatedAt), w.TaskID, w.OrgID, w.ProjectID)
		return err
	})
	return created, err
}

// DeleteWebhook removes a task's webhook, its rules and its events.
func (db *DB) DeleteWebhook(ctx context.Context, orgID, projectID, taskID string) error {
	return db.Write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhooks WHERE task_id = ? AND org_id = ? AND project_id = ?`, taskID, orgID, projectID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return NotFound("webhook")
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM webhook_events WHERE task_id = ? AND org_id = ?`, taskID, orgID)
		return err
	})
}

// WebhookRetention is one webhook's retention for the sweep.
type WebhookRetention struct {
	TaskID string
	Days   int
}

// SweepWebhookEvents deletes events older than their webhook's retention,
// at most batch rows per transaction so ingest is never blocked for long.
func (db *DB) SweepWebhookEvents(ctx context.Context, now time.Time, batch int) (int, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT task_id, retention_days FROM webhooks`)
	if err != nil {
		return 0, err
	}
	var hooks []WebhookRetention
	for rows.Next() {
		var h WebhookRetention
		if err := rows.Scan(&h.TaskID, &h.Days); err != nil {
			rows.Close()
			return 0, err
		}
		hooks = append(hooks, h)
	}
	rows.Close()
	total := 0
	for _, h := range hooks {
		cut := TS(now.Add(-time.Duration(h.Days) * 24 * time.Hour))
		for {
			var n int64
			err := db.Write(ctx, func(tx *Tx) error {
				res, err := tx.ExecContext(ctx, `DELETE FROM webhook_events WHERE rowid IN (SELECT rowid FROM webhook_events
					WHERE task_id = ? AND received_at < ? AND status != 'received' LIMIT ?)`, h.TaskID, cut, batch)
				if err != nil {
					return err
				}
				n, _ = res.RowsAffected()
				return nil
			})
			if err != nil {
				return total, err
			}
			total += int(n)
			if n < int64(batch) {
				break
			}
		}
	}
	return total, nil
}
