package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Rule kinds and effects. must_never always blocks; must_always asks for
// approval, adds an obligation to the system prompt, or pre-approves.
const (
	RuleMustAlways = "must_always"
	RuleMustNever  = "must_never"

	EffectBlock           = "block"
	EffectRequireApproval = "require_approval"
	EffectObligation      = "obligation"
	EffectAllow           = "allow"

	MatchNone    = ""
	MatchGlob    = "glob"
	MatchRegex   = "regex"
	MatchCommand = "command" // a shellscan.Pattern over the parsed commands
	MatchEffect  = "effect"  // an effect category of the parsed command
)

// MaxRulesPerScope caps the rules of one org or project: every tool call
// is checked against all of them.
const MaxRulesPerScope = 500

// Rule is one must_always / must_never rule. ProjectID "" means org-wide.
type Rule struct {
	ID               string
	OrgID            string
	ProjectID        string
	Kind             string
	Effect           string
	Description      string
	Tool             string // "" any tool
	MatchType        string
	Pattern          string
	Enabled          bool
	AllowOpaque      bool // a must_never rule lets calls it cannot analyse through
	SourceApprovalID string
	CreatedBy        string
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// RulePatch changes a rule; nil fields stay.
type RulePatch struct {
	Description *string
	Effect      *string
	Tool        *string
	MatchType   *string
	Pattern     *string
	Enabled     *bool
	AllowOpaque *bool
}

const ruleCols = `id, org_id, COALESCE(project_id, ''), kind, effect, description, tool, match_type, pattern, enabled, allow_opaque,
	COALESCE(source_approval_id, ''), COALESCE(created_by, ''), created_at, updated_at`

func scanRule(row interface{ Scan(...any) error }) (*Rule, error) {
	var r Rule
	var created, updated string
	err := row.Scan(&r.ID, &r.OrgID, &r.ProjectID, &r.Kind, &r.Effect, &r.Description, &r.Tool, &r.MatchType, &r.Pattern,
		&r.Enabled, &r.AllowOpaque, &r.SourceApprovalID, &r.CreatedBy, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("rule")
	}
	if err != nil {
		return nil, err
	}
	r.CreatedAt, r.UpdatedAt = ParseTS(created), ParseTS(updated)
	return &r, nil
}

// FindRules lists the rules of exactly one scope (the org's own when
// projectID is ""), oldest first.
func (db *DB) FindRules(ctx context.Context, orgID, projectID string) ([]Rule, error) {
	return queryRules(ctx, db.r, `SELECT `+ruleCols+` FROM rules WHERE org_id = ? AND COALESCE(project_id, '') = ?
		ORDER BY created_at, id`, orgID, projectID)
}

// FindRulesForProject lists the rules that apply to a project: its org's
// (first) and its own. With enabledOnly, disabled rules are left out.
func (db *DB) FindRulesForProject(ctx context.Context, orgID, projectID string, enabledOnly bool) ([]Rule, error) {
	q := `SELECT ` + ruleCols + ` FROM rules WHERE org_id = ? AND (project_id IS NULL OR project_id = ?)`
	if enabledOnly {
		q += ` AND enabled = 1`
	}
	return queryRules(ctx, db.r, q+` ORDER BY project_id IS NOT NULL, created_at, id`, orgID, projectID)
}

func queryRules(ctx context.Context, q Querier, query string, args ...any) ([]Rule, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out, err := collectRows(rows, scanRule)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FindRule returns one rule of exactly this scope.
func (db *DB) FindRule(ctx context.Context, orgID, projectID, id string) (*Rule, error) {
	return scanRule(db.r.QueryRowContext(ctx, `SELECT `+ruleCols+` FROM rules
		WHERE id = ? AND org_id = ? AND COALESCE(project_id, '') = ?`, id, orgID, projectID))
}

// createRuleTx inserts r (id and times filled), refusing past MaxRulesPerScope.
func createRuleTx(ctx context.Context, tx *Tx, r *Rule) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM rules WHERE org_id = ? AND COALESCE(project_id, '') = ?`,
		r.OrgID, r.ProjectID).Scan(&n); err != nil {
		return err
	}
	if n >= MaxRulesPerScope {
		return &Error{Code: EConflict, Message: "too many rules in this scope", Reason: "rule_limit"}
	}
	if r.ID == "" {
		r.ID = NewID()
	}
	r.CreatedAt, r.UpdatedAt = tx.Now, tx.Now
	_, err := tx.ExecContext(ctx, `INSERT INTO rules (id, org_id, project_id, kind, effect, description, tool, match_type,
		pattern, enabled, allow_opaque, source_approval_id, created_by, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		r.ID, r.OrgID, nullStr(r.ProjectID), r.Kind, r.Effect, r.Description, r.Tool, r.MatchType, r.Pattern, r.Enabled, r.AllowOpaque,
		nullStr(r.SourceApprovalID), nullStr(r.CreatedBy), TS(r.CreatedAt), TS(r.UpdatedAt))
	return err
}

// CreateRule inserts r in its own transaction.
func (db *DB) CreateRule(ctx context.Context, r *Rule) error {
	return db.Write(ctx, func(tx *Tx) error { return createRuleTx(ctx, tx, r) })
}

// UpdateRule applies p to a rule of exactly this scope; check validates the
// result before it is written (nil: none).
func (db *DB) UpdateRule(ctx context.Context, orgID, projectID, id string, p RulePatch, check func(*Rule) error) (*Rule, error) {
	var out *Rule
	err := db.Write(ctx, func(tx *Tx) error {
		r, err := scanRule(tx.QueryRowContext(ctx, `SELECT `+ruleCols+` FROM rules
			WHERE id = ? AND org_id = ? AND COALESCE(project_id, '') = ?`, id, orgID, projectID))
		if err != nil {
			return err
		}
		setIf(&r.Description, p.Description)
		setIf(&r.Effect, p.Effect)
		setIf(&r.Tool, p.Tool)
		setIf(&r.MatchType, p.MatchType)
		setIf(&r.Pattern, p.Pattern)
		setIf(&r.Enabled, p.Enabled)
		setIf(&r.AllowOpaque, p.AllowOpaque)
		if check != nil {
			if err := check(r); err != nil {
				return err
			}
		}
		r.UpdatedAt = tx.Now
		_, err = tx.ExecContext(ctx, `UPDATE rules SET effect = ?, description = ?, tool = ?, match_type = ?, pattern = ?,
			enabled = ?, allow_opaque = ?, updated_at = ? WHERE id = ?`, r.Effect, r.Description, r.Tool, r.MatchType, r.Pattern,
			r.Enabled, r.AllowOpaque, TS(r.UpdatedAt), r.ID)
		out = r
		return err
	})
	return out, err
}

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// DeleteRule removes a rule of exactly this scope.
func (db *DB) DeleteRule(ctx context.Context, orgID, projectID, id string) error {
	return db.Write(ctx, func(tx *Tx) error {
		return execOne(ctx, tx, "rule", `DELETE FROM rules WHERE id = ? AND org_id = ? AND COALESCE(project_id, '') = ?`,
			id, orgID, projectID)
	})
}
