package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"
)

// MaxShadowRulesPerProject caps rules on trial: each is evaluated beside
// the live rules on every tool call.
const MaxShadowRulesPerProject = 20

// MaxShadowHitsPerRule caps what one shadow rule records.
const MaxShadowHitsPerRule = 1000

// ShadowRule is a rule on trial: it decides nothing and records what it
// would have done until TrialUntil.
type ShadowRule struct {
	Rule
	TrialUntil time.Time
	Hits       int
}

// ShadowHit is one call a shadow rule would have decided differently.
type ShadowHit struct {
	ID        string
	RuleID    string
	SessionID string
	At        time.Time
	Tool      string
	Command   string
	Actual    string
	Would     string
}

const shadowCols = `id, org_id, project_id, kind, effect, description, tool, match_type, pattern, allow_opaque, trial_until, hits,
	COALESCE(created_by, ''), created_at, updated_at`

func scanShadow(row rowScanner) (*ShadowRule, error) {
	var r ShadowRule
	var until, created, updated string
	err := row.Scan(&r.ID, &r.OrgID, &r.ProjectID, &r.Kind, &r.Effect, &r.Description, &r.Tool, &r.MatchType, &r.Pattern,
		&r.AllowOpaque, &until, &r.Hits, &r.CreatedBy, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("shadow rule")
	}
	if err != nil {
		return nil, err
	}
	r.Enabled = true
	r.TrialUntil, r.CreatedAt, r.UpdatedAt = ParseTS(until), ParseTS(created), ParseTS(updated)
	return &r, nil
}

// CreateShadowRule stores a rule on trial.
func (db *DB) CreateShadowRule(ctx context.Context, r *ShadowRule) error {
	return db.Write(ctx, func(tx *Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM shadow_rules WHERE project_id = ?`, r.ProjectID).Scan(&n); err != nil {
			return err
		}
		if n >= MaxShadowRulesPerProject {
			return &Error{Code: EConflict, Message: "too many shadow rules in this project: promote or delete some", Reason: "shadow_rule_limit"}
		}
		r.ID, r.CreatedAt, r.UpdatedAt, r.Enabled = NewID(), tx.Now, tx.Now, true
		_, err := tx.ExecContext(ctx, `INSERT INTO shadow_rules (id, org_id, project_id, kind, effect,
			description, tool, match_type, pattern, allow_opaque, trial_until, hits, created_by, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			r.ID, r.OrgID, r.ProjectID, r.Kind, r.Effect, r.Description, r.Tool, r.MatchType, r.Pattern, r.AllowOpaque,
			TS(r.TrialUntil), 0, nullStr(r.CreatedBy), TS(r.CreatedAt), TS(r.UpdatedAt))
		return err
	})
}

// FindShadowRules lists a project's shadow rules; onTrialAt set leaves out
// those whose trial ended before it.
func (db *DB) FindShadowRules(ctx context.Context, orgID, projectID string, onTrialAt *time.Time) ([]ShadowRule, error) {
	q, args := `SELECT `+shadowCols+` FROM shadow_rules WHERE org_id = ? AND project_id = ?`, []any{orgID, projectID}
	if onTrialAt != nil {
		q, args = q+` AND trial_until > ?`, append(args, TS(*onTrialAt))
	}
	rows, err := db.r.QueryContext(ctx, q+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return collectRows(rows, scanShadow)
}

// FindShadowRule reads one shadow rule of a project.
func (db *DB) FindShadowRule(ctx context.Context, orgID, projectID, id string) (*ShadowRule, error) {
	return scanShadow(db.r.QueryRowContext(ctx, `SELECT `+shadowCols+` FROM shadow_rules WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID))
}

// DeleteShadowRule removes a shadow rule and what it recorded.
func (db *DB) DeleteShadowRule(ctx context.Context, orgID, projectID, id string) error {
	return db.Write(ctx, func(tx *Tx) error {
		return execOne(ctx, tx, "shadow rule", `DELETE FROM shadow_rules WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID)
	})
}

// PromoteShadowRule makes a shadow rule live: the rule is created (same
// id, so its hits stay traceable) and the shadow removed, in one transaction.
func (db *DB) PromoteShadowRule(ctx context.Context, orgID, projectID, id, userID string) (*Rule, error) {
	var out *Rule
	err := db.Write(ctx, func(tx *Tx) error {
		sr, err := scanShadow(tx.QueryRowContext(ctx, `SELECT `+shadowCols+` FROM shadow_rules WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID))
		if err != nil {
			return err
		}
		r := sr.Rule
		r.CreatedBy = userID
		if err := createRuleTx(ctx, tx, &r); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM shadow_rules WHERE id = ?`, id); err != nil {
			return err
		}
		out = &r
		return nil
	})
	return out, err
}

// RecordShadowHits stores what shadow rules would have done to one call,
// up to MaxShadowHitsPerRule per rule.
func (db *DB) RecordShadowHits(ctx context.Context, hits []ShadowHit) error {
	if len(hits) == 0 {
		return nil
	}
	return db.Write(ctx, func(tx *Tx) error {
		for _, h := range hits {
			res, err := tx.ExecContext(ctx, `UPDATE shadow_rules SET hits = hits + 1 WHERE id = ? AND hits < ?`, h.RuleID, MaxShadowHitsPerRule)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				continue
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO shadow_rule_hits (id, rule_id, session_id, at, tool, command, actual, would)
				VALUES (?,?,?,?,?,?,?,?)`, NewID(), h.RuleID, nullStr(h.SessionID), TS(tx.Now), h.Tool, h.Command, h.Actual, h.Would); err != nil {
				return err
			}
		}
		return nil
	})
}

// FindShadowHits lists a shadow rule's hits, newest first. The caller has
// checked the rule belongs to the tenant.
func (db *DB) FindShadowHits(ctx context.Context, ruleID string, limit int) ([]ShadowHit, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, rule_id, COALESCE(session_id, ''), at, tool, command, actual, would
		FROM shadow_rule_hits WHERE rule_id = ? ORDER BY at DESC, id DESC LIMIT ?`, ruleID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return collectRows(rows, func(r rowScanner) (*ShadowHit, error) {
		var h ShadowHit
		var at string
		if err := r.Scan(&h.ID, &h.RuleID, &h.SessionID, &at, &h.Tool, &h.Command, &h.Actual, &h.Would); err != nil {
			return nil, err
		}
		h.At = ParseTS(at)
		return &h, nil
	})
}

// RecordedCall is one tool call an agent made, as the session's event log
// kept it.
type RecordedCall struct {
	SessionID string
	Seq       int64
	At        time.Time
	Data      string // JSON agent.ToolCallEvent
}

// FindRecordedCalls lists a project's tool calls since a time, oldest
// first: the newest limit of them when there are more (more reports true),
// since a what-if is about the calls a rule would meet next.
func (db *DB) FindRecordedCalls(ctx context.Context, orgID, projectID string, since time.Time, limit int) ([]RecordedCall, bool, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT e.session_id, e.seq, e.created_at, e.data FROM session_events e
		JOIN agent_sessions s ON s.id = e.session_id
		WHERE s.org_id = ? AND s.project_id = ? AND s.last_activity >= ? AND e.type = 'tool.call' AND e.created_at >= ?
		ORDER BY e.created_at DESC, e.session_id DESC, e.seq DESC LIMIT ?`, orgID, projectID, TS(since), TS(since), limit+1)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	var out []RecordedCall
	for rows.Next() {
		var c RecordedCall
		var at string
		if err := rows.Scan(&c.SessionID, &c.Seq, &at, &c.Data); err != nil {
			return nil, false, err
		}
		c.At = ParseTS(at)
		out = append(out, c)
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	slices.Reverse(out)
	return out, more, rows.Err()
}
