package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Onboarding is a user's progress through first-run set-up.
type Onboarding struct {
	UserID    string
	Status    string // pending, skipped, completed
	OrgID     string
	ProjectID string
	TaskID    string
	UpdatedAt time.Time
}

// FindOnboarding returns the user's onboarding; a user who never touched it is pending.
func (db *DB) FindOnboarding(ctx context.Context, userID string) (*Onboarding, error) {
	return findOnboarding(ctx, db.r, userID)
}

func findOnboarding(ctx context.Context, q Querier, userID string) (*Onboarding, error) {
	o := &Onboarding{UserID: userID, Status: "pending"}
	var org, project, task sql.NullString
	var updated string
	err := q.QueryRowContext(ctx, `SELECT status, org_id, project_id, task_id, updated_at FROM onboarding WHERE user_id = ?`, userID).
		Scan(&o.Status, &org, &project, &task, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return o, nil
	}
	o.OrgID, o.ProjectID, o.TaskID, o.UpdatedAt = org.String, project.String, task.String, ParseTS(updated)
	return o, err
}

// setOnboardingTx upserts the user's onboarding row.
func setOnboardingTx(ctx context.Context, tx *Tx, o *Onboarding) error {
	o.UpdatedAt = tx.Now
	_, err := tx.ExecContext(ctx, `INSERT INTO onboarding (user_id, status, org_id, project_id, task_id, updated_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (user_id) DO UPDATE SET status = excluded.status, org_id = excluded.org_id, project_id = excluded.project_id,
		task_id = excluded.task_id, updated_at = excluded.updated_at`,
		o.UserID, o.Status, nullStr(o.OrgID), nullStr(o.ProjectID), nullStr(o.TaskID), TS(tx.Now))
	return err
}

// SetOnboardingStatus moves the user's onboarding to status, keeping what bootstrap made.
func (db *DB) SetOnboardingStatus(ctx context.Context, userID, status string) (*Onboarding, error) {
	var out *Onboarding
	err := db.Write(ctx, func(tx *Tx) error {
		o, err := findOnboarding(ctx, tx, userID)
		if err != nil {
			return err
		}
		o.Status = status
		out = o
		return setOnboardingTx(ctx, tx, o)
	})
	return out, err
}

// StoredResponse is the answer kept for an Idempotency-Key.
type StoredResponse struct {
	RequestHash string
	Status      int
	Body        string
}

// findIdempotentTx returns the stored response of (user, scope, key), or nil.
func findIdempotentTx(ctx context.Context, tx *Tx, userID, scope, key string) (*StoredResponse, error) {
	var r StoredResponse
	err := tx.QueryRowContext(ctx, `SELECT request_hash, status, response FROM idempotency_keys WHERE user_id = ? AND scope = ? AND key = ?`,
		userID, scope, key).Scan(&r.RequestHash, &r.Status, &r.Body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return &r, err
}

// saveIdempotentTx stores the response of (user, scope, key) in the same
// transaction as the work it describes, so both commit or neither does.
func saveIdempotentTx(ctx context.Context, tx *Tx, userID, scope, key string, r StoredResponse) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO idempotency_keys (user_id, scope, key, request_hash, status, response, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		userID, scope, key, r.RequestHash, r.Status, r.Body, TS(tx.Now))
	return err
}
