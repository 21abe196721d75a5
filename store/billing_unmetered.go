package store

import "context"

// MarkRunUnmetered records that a session's run was refused by the plan's
// monthly caps before it called the model: it stays a failed session, but it
// is no run for metering (ComputeUsage) or for the cap (FindAgentUse). A
// session that has already used the model (an earlier turn) stays metered.
func (db *DB) MarkRunUnmetered(ctx context.Context, orgID, sessionID string) error {
	return db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE agent_sessions SET unmetered = 1
			WHERE id = ? AND org_id = ? AND steps = 0 AND tokens_in + tokens_out = 0 AND cost = 0`, sessionID, orgID)
		return err
	})
}
