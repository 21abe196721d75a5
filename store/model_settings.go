package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// ModelSettings is how an org's primary model is driven. Zero windows
// mean "the default for the model's name"; TextToolCalls is "auto", "on"
// or "off".
type ModelSettings struct {
	OrgID                string
	ContextWindow        int
	AnswerReserve        int
	TextToolCalls        string
	LearnedContextWindow int
	LearnedModel         string
	UpdatedBy            string
	UpdatedAt            time.Time
}

// Text tool call modes of ModelSettings.TextToolCalls.
const (
	TextToolCallsAuto = "auto"
	TextToolCallsOn   = "on"
	TextToolCallsOff  = "off"
)

// FindModelSettings returns the org's settings; an org that set none gets
// the defaults (and a zero UpdatedAt), not an error: every org has them.
func (db *DB) FindModelSettings(ctx context.Context, orgID string) (*ModelSettings, error) {
	s := &ModelSettings{OrgID: orgID, TextToolCalls: TextToolCallsAuto}
	var at string
	err := db.r.QueryRowContext(ctx, `SELECT context_window, answer_reserve, text_tool_calls, learned_context_window,
		learned_model, updated_by, updated_at FROM org_model_settings WHERE org_id = ?`, orgID).Scan(
		&s.ContextWindow, &s.AnswerReserve, &s.TextToolCalls, &s.LearnedContextWindow, &s.LearnedModel, &s.UpdatedBy, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	s.UpdatedAt = ParseTS(at)
	return s, nil
}

// PutModelSettings stores what an owner set; a learned window stays
// unless the configured window changed (the operator then knows better).
func (db *DB) PutModelSettings(ctx context.Context, s *ModelSettings) error {
	return db.Write(ctx, func(tx *Tx) error {
		s.UpdatedAt = tx.Now
		_, err := tx.ExecContext(ctx, `INSERT INTO org_model_settings (org_id, context_window, answer_reserve, text_tool_calls,
			updated_by, updated_at) VALUES (?,?,?,?,?,?)
			ON CONFLICT (org_id) DO UPDATE SET answer_reserve = excluded.answer_reserve, text_tool_calls = excluded.text_tool_calls,
			learned_context_window = CASE WHEN org_model_settings.context_window = excluded.context_window
				THEN org_model_settings.learned_context_window ELSE 0 END,
			context_window = excluded.context_window, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
			s.OrgID, s.ContextWindow, s.AnswerReserve, s.TextToolCalls, s.UpdatedBy, TS(tx.Now))
		return err
	})
}

// LearnContextWindow records the window a model server reported for
// model in its own overflow error, so the org's next runs start inside it.
func (db *DB) LearnContextWindow(ctx context.Context, orgID, model string, window int) error {
	return db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO org_model_settings (org_id, learned_context_window, learned_model, updated_at)
			VALUES (?,?,?,?) ON CONFLICT (org_id) DO UPDATE SET learned_context_window = excluded.learned_context_window,
			learned_model = excluded.learned_model`, orgID, window, model, TS(tx.Now))
		return err
	})
}

// CountOrgFailovers counts the model failovers of org's sessions since t
// (session events of type model.failover), for the dashboard.
func (db *DB) CountOrgFailovers(ctx context.Context, orgID string, since time.Time) (int, error) {
	var n int
	err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM session_events e JOIN agent_sessions s ON s.id = e.session_id
		WHERE s.org_id = ? AND e.type = 'model.failover' AND e.created_at >= ?`, orgID, TS(since)).Scan(&n)
	return n, err
}

// MarkTokensEstimated records that session's token counts are (partly)
// this server's estimate.
func (db *DB) MarkTokensEstimated(ctx context.Context, orgID, sessionID string) error {
	return db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO session_tokens_estimated (session_id, org_id, created_at) VALUES (?,?,?)
			ON CONFLICT (session_id) DO NOTHING`, sessionID, orgID, TS(tx.Now))
		return err
	})
}

// TokensEstimated reports whether the org's session has estimated counts.
func (db *DB) TokensEstimated(ctx context.Context, orgID, sessionID string) (bool, error) {
	var n int
	err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM session_tokens_estimated WHERE session_id = ? AND org_id = ?`,
		sessionID, orgID).Scan(&n)
	return n > 0, err
}
