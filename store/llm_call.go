package store

import (
	"context"
	"time"
)

// LLMCall is a model call made outside an agent session (a postmortem
// draft). Its cost counts in FindSpend like a run's.
type LLMCall struct {
	OrgID     string
	ProjectID string
	Purpose   string
	SubjectID string
	Model     string
	TokensIn  int64
	TokensOut int64
	Cost      float64
	CreatedAt time.Time
}

// RecordLLMCall stores one call.
func (db *DB) RecordLLMCall(ctx context.Context, c *LLMCall) error {
	return db.Write(ctx, func(tx *Tx) error {
		c.CreatedAt = tx.Now
		_, err := tx.ExecContext(ctx, `INSERT INTO llm_calls (id, org_id, project_id, purpose, subject_id, model, tokens_in, tokens_out, cost, created_at)
			VALUES (?,?,?,?,?,?,?,?,?,?)`, NewID(), c.OrgID, c.ProjectID, c.Purpose, c.SubjectID, c.Model, c.TokensIn, c.TokensOut, c.Cost, TS(c.CreatedAt))
		return err
	})
}
