package store

import (
	"context"
	"time"
)

// ConsumeToolApproval marks as executed, once, an approved tool_call
// approval of a session whose subject carries argsHash, decided at or after
// decidedSince. It reports the approval's id, or "" when there is none
// (never approved, denied, already used, or decided too long ago).
func (db *DB) ConsumeToolApproval(ctx context.Context, orgID, projectID, sessionID, argsHash string, decidedSince time.Time) (string, error) {
	var id string
	err := db.Write(ctx, func(tx *Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id FROM approvals WHERE org_id = ? AND project_id = ? AND kind = ?
			AND COALESCE(session_id, '') = ? AND status = ? AND json_extract(subject, '$.args_sha256') = ?
			AND json_extract(result, '$.executed_at') IS NULL AND decided_at >= ? ORDER BY decided_at LIMIT 1`,
			orgID, projectID, ApprovalToolCall, sessionID, ApprovalApproved, argsHash, TS(decidedSince))
		if err != nil {
			return err
		}
		for rows.Next() {
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if id == "" {
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE approvals SET result = json_set(result, '$.executed_at', ?), updated_at = ?
			WHERE id = ?`, TS(tx.Now), TS(tx.Now), id)
		return err
	})
	return id, err
}

// ExpireToolApprovals marks pending tool_call approvals past their expiry
// as expired and returns them, so the sessions waiting on them can be told
// (ExpireApprovals, which expires every kind, tells no one).
func (db *DB) ExpireToolApprovals(ctx context.Context) ([]Approval, error) {
	var out []Approval
	err := db.Write(ctx, func(tx *Tx) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, `UPDATE approvals SET status = ?, updated_at = ?
			WHERE kind = ? AND status = ? AND expires_at <= ? RETURNING `+approvalCols,
			ApprovalExpired, TS(tx.Now), ApprovalToolCall, ApprovalPending, TS(tx.Now))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			a, err := scanApproval(rows)
			if err != nil {
				return err
			}
			out = append(out, *a)
		}
		return rows.Err()
	})
	return out, err
}
