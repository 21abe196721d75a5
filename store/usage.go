package store

import (
	"context"
	"strings"
	"time"
)

// Usage and dashboard figures are sums over agent_sessions rows, so they
// always match the sessions they count: there is no second ledger to drift.

// UsageScope selects the sessions a figure sums: one org, the projects the
// caller may see (none = nothing), created at or after Since (nil = ever).
type UsageScope struct {
	OrgID      string
	ProjectIDs []string
	Since      *time.Time
}

func (u UsageScope) where(extra ...string) (string, []any) {
	ph := strings.TrimSuffix(strings.Repeat("?,", len(u.ProjectIDs)), ",")
	if ph == "" {
		ph = "NULL" // no project: matches nothing
	}
	w := []string{"org_id = ?", "project_id IN (" + ph + ")"}
	args := []any{u.OrgID}
	for _, p := range u.ProjectIDs {
		args = append(args, p)
	}
	if u.Since != nil {
		w = append(w, "created_at >= ?")
		args = append(args, TS(*u.Since))
	}
	return strings.Join(append(w, extra...), " AND "), args
}

// UsageRow is one sum of sessions.
type UsageRow struct {
	Key       string // day (YYYY-MM-DD), agent type or task id, by the query
	Label     string // task name for UsageByTask
	Sessions  int
	TokensIn  int64
	TokensOut int64
	Cost      float64
}

const usageSums = `count(*), COALESCE(SUM(tokens_in), 0), COALESCE(SUM(tokens_out), 0), COALESCE(SUM(cost), 0)`

// UsageTotal sums every session of the scope.
func (db *DB) UsageTotal(ctx context.Context, u UsageScope) (UsageRow, error) {
	cond, args := u.where()
	var r UsageRow
	err := db.r.QueryRowContext(ctx, `SELECT `+usageSums+` FROM agent_sessions WHERE `+cond, args...).
		Scan(&r.Sessions, &r.TokensIn, &r.TokensOut, &r.Cost)
	return r, err
}

// UsageGrouped sums the scope's sessions per group: "day" (UTC date of
// creation, ascending), "agent" (agent type, by cost) or "task" (task runs
// only, by cost, at most limit rows).
func (db *DB) UsageGrouped(ctx context.Context, u UsageScope, by string, limit int) ([]UsageRow, error) {
	var key, order, label string
	var extra []string
	switch by {
	case "day":
		key, order, label = "substr(created_at, 1, 10)", "1 ASC", "''"
	case "agent":
		key, order, label = "agent_type", "6 DESC, 1 ASC", "''"
	case "task":
		key, order, label = "task_id", "6 DESC, 1 ASC", "MAX(task_name)"
		extra = append(extra, "task_id IS NOT NULL")
	default:
		return nil, Errorf(EInvalid, "unknown usage grouping %q", by)
	}
	cond, args := u.where(extra...)
	q := `SELECT ` + key + `, ` + label + `, ` + usageSums + ` FROM agent_sessions WHERE ` + cond + ` GROUP BY 1 ORDER BY ` + order
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []UsageRow{}
	for rows.Next() {
		var r UsageRow
		if err := rows.Scan(&r.Key, &r.Label, &r.Sessions, &r.TokensIn, &r.TokensOut, &r.Cost); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// TopSessions returns the scope's most expensive sessions.
func (db *DB) TopSessions(ctx context.Context, u UsageScope, limit int) ([]AgentSession, error) {
	cond, args := u.where()
	rows, err := db.r.QueryContext(ctx, `SELECT `+sessionRowCols+` FROM agent_sessions WHERE `+cond+
		` ORDER BY cost DESC, (tokens_in + tokens_out) DESC, id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out, err := collectRows(rows, scanSessionRow)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SessionFunnel counts the scope's sessions at each stage of a run.
type SessionFunnel struct {
	Created, Started, UsedTools, NeededApproval    int
	Running, WaitingApproval                       int
	Pending, Completed, Failed, Cancelled, Timeout int
	LastActivity                                   *time.Time
}

// countIf sums each condition as 0/1 with a CASE expression, not
// SUM(condition): PostgreSQL has no SUM(boolean).
func countIf(conds ...string) string {
	parts := make([]string, len(conds))
	for i, c := range conds {
		parts[i] = "COALESCE(SUM(CASE WHEN " + c + " THEN 1 ELSE 0 END), 0)"
	}
	return strings.Join(parts, ", ")
}

// Funnel counts sessions by stage and status.
func (db *DB) Funnel(ctx context.Context, u UsageScope) (SessionFunnel, error) {
	cond, args := u.where()
	var f SessionFunnel
	var last *string
	err := db.r.QueryRowContext(ctx, `SELECT count(*), `+countIf(
		"started_at IS NOT NULL",
		"tool_calls > 0",
		"approvals > 0",
		"status = 'running'",
		"status = 'running' AND waiting_approval = 1",
		"status = 'pending'",
		"status = 'completed'",
		"status = 'failed'",
		"status = 'cancelled'",
		"status = 'timeout'")+`, MAX(last_activity)
		FROM agent_sessions WHERE `+cond, args...).Scan(&f.Created, &f.Started, &f.UsedTools, &f.NeededApproval,
		&f.Running, &f.WaitingApproval, &f.Pending, &f.Completed, &f.Failed, &f.Cancelled, &f.Timeout, &last)
	if last != nil {
		t := ParseTS(*last)
		f.LastActivity = &t
	}
	return f, err
}

// ResourceCounts are the things a project (or the visible projects of an
// org) holds.
type ResourceCounts struct {
	Tasks, EnabledTasks, Sessions, Memories, Secrets, ProjectMembers int
}

// CountResources counts the resources of the given projects of orgID.
// Org-wide memories and secrets are not counted here (see CountOrgResources).
func (db *DB) CountResources(ctx context.Context, orgID string, projectIDs []string) (ResourceCounts, error) {
	u := UsageScope{OrgID: orgID, ProjectIDs: projectIDs}
	cond, args := u.where()
	var c ResourceCounts
	for _, q := range []struct {
		table, extra string
		dst          *int
	}{
		{"tasks", "", &c.Tasks}, {"tasks", " AND enabled = 1", &c.EnabledTasks}, {"agent_sessions", "", &c.Sessions},
		{"memories", "", &c.Memories}, {"secrets", "", &c.Secrets}, {"project_members", "", &c.ProjectMembers},
	} {
		if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM `+q.table+` WHERE `+cond+q.extra, args...).Scan(q.dst); err != nil {
			return c, err
		}
	}
	return c, nil
}

// OrgCounts are the org-level things org-resources reports.
type OrgCounts struct {
	Members, APIKeys, OrgMemories, OrgSecrets int
}

// CountOrgResources counts an org's members, live API keys and org-wide
// memories and secrets.
func (db *DB) CountOrgResources(ctx context.Context, orgID string, now time.Time) (OrgCounts, error) {
	var c OrgCounts
	err := db.r.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM org_members WHERE org_id = ?),
		(SELECT count(*) FROM api_keys WHERE org_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)),
		(SELECT count(*) FROM memories WHERE org_id = ? AND project_id IS NULL),
		(SELECT count(*) FROM secrets WHERE org_id = ? AND project_id IS NULL AND kind != 'llm_key')`,
		orgID, orgID, TS(now), orgID, orgID).Scan(&c.Members, &c.APIKeys, &c.OrgMemories, &c.OrgSecrets)
	return c, err
}
