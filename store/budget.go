package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Budget is the spending caps of an org (ProjectID "") or a project. A nil
// cap is no cap.
type Budget struct {
	OrgID          string
	ProjectID      string
	DailyCostUSD   *float64
	MonthlyCostUSD *float64
	SessionTokens  *int64
	UpdatedBy      string
	UpdatedAt      *time.Time // nil: never configured
}

// FindBudget returns the caps of exactly one scope; an unconfigured scope
// reads as a Budget without caps.
func (db *DB) FindBudget(ctx context.Context, orgID, projectID string) (*Budget, error) {
	b := &Budget{OrgID: orgID, ProjectID: projectID}
	var daily, monthly sql.NullFloat64
	var tokens sql.NullInt64
	var by sql.NullString
	var updated string
	err := db.r.QueryRowContext(ctx, `SELECT daily_cost_usd, monthly_cost_usd, session_tokens, updated_by, updated_at
		FROM budgets WHERE org_id = ? AND COALESCE(project_id, '') = ?`, orgID, projectID).
		Scan(&daily, &monthly, &tokens, &by, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return b, nil
	}
	if err != nil {
		return nil, err
	}
	if daily.Valid {
		b.DailyCostUSD = &daily.Float64
	}
	if monthly.Valid {
		b.MonthlyCostUSD = &monthly.Float64
	}
	if tokens.Valid {
		b.SessionTokens = &tokens.Int64
	}
	t := ParseTS(updated)
	b.UpdatedBy, b.UpdatedAt = by.String, &t
	return b, nil
}

// PutBudget replaces the caps of b's scope.
func (db *DB) PutBudget(ctx context.Context, b *Budget) error {
	return db.Write(ctx, func(tx *Tx) error {
		now := tx.Now
		b.UpdatedAt = &now
		if _, err := tx.ExecContext(ctx, `DELETE FROM budgets WHERE org_id = ? AND COALESCE(project_id, '') = ?`,
			b.OrgID, b.ProjectID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO budgets (org_id, project_id, daily_cost_usd, monthly_cost_usd,
			session_tokens, updated_by, updated_at) VALUES (?,?,?,?,?,?,?)`, b.OrgID, nullStr(b.ProjectID),
			b.DailyCostUSD, b.MonthlyCostUSD, b.SessionTokens, nullStr(b.UpdatedBy), TS(now))
		return err
	})
}

// Spend is what agent sessions cost in a scope since two instants.
type Spend struct {
	Day   float64 // since the start of the day
	Month float64 // since the start of the month
}

// FindSpend sums the cost of the agent sessions of an org (projectID "")
// or a project created since dayStart and since monthStart, and of the
// model calls made outside sessions (llm_calls: postmortem drafts).
func (db *DB) FindSpend(ctx context.Context, orgID, projectID string, dayStart, monthStart time.Time) (Spend, error) {
	var s Spend
	for _, table := range []string{"agent_sessions", "llm_calls"} {
		var day, month float64
		q := `SELECT COALESCE(SUM(CASE WHEN created_at >= ? THEN cost END), 0), COALESCE(SUM(cost), 0)
		FROM ` + table + ` WHERE org_id = ? AND created_at >= ?`
		args := []any{TS(dayStart), orgID, TS(monthStart)}
		if projectID != "" {
			q += ` AND project_id = ?`
			args = append(args, projectID)
		}
		if err := db.r.QueryRowContext(ctx, q, args...).Scan(&day, &month); err != nil {
			return s, err
		}
		s.Day, s.Month = s.Day+day, s.Month+month
	}
	return s, nil
}

// SessionTokens returns the tokens a session has used so far (0 for a
// session that does not exist yet).
func (db *DB) SessionTokens(ctx context.Context, orgID, sessionID string) (int64, error) {
	var n int64
	err := db.r.QueryRowContext(ctx, `SELECT tokens_in + tokens_out FROM agent_sessions WHERE id = ? AND org_id = ?`,
		sessionID, orgID).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}
