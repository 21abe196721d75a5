package store

import (
	"context"
	"strings"
	"time"
)

// SessionFilter selects sessions of one project for the session lists.
type SessionFilter struct {
	OrgID, ProjectID string
	// Q is a case-insensitive substring: of title, summary, id or task name
	// (QLegacy: of title or first prompt, as the CLI's list has always done).
	Q             string
	QLegacy       bool
	Source        string
	TriggerSource string
	Status        string
	CreatedAfter  *time.Time // inclusive
	CreatedBefore *time.Time // exclusive
	MinCost       *float64
	MaxCost       *float64
	Sort          string // a key of SessionSorts
	Asc           bool
	Limit, Offset int
}

// SessionSorts maps the sort names of the spec to their column expressions.
var SessionSorts = map[string]string{
	"last_activity": "last_activity",
	"created_at":    "created_at",
	"cost":          "cost",
	"tokens":        "(tokens_in + tokens_out)",
	"duration":      "duration_ms",
	"status":        "status",
}

// FindSessions returns one page of sessions and the total matching f.
func (db *DB) FindSessions(ctx context.Context, f SessionFilter) ([]AgentSession, int, error) {
	where := []string{"org_id = ?", "project_id = ?"}
	args := []any{f.OrgID, f.ProjectID}
	if q := strings.TrimSpace(f.Q); q != "" {
		like := "%" + likeEscape(strings.ToLower(q)) + "%"
		if f.QLegacy {
			where = append(where, `(lower(title) LIKE ? ESCAPE '\' OR lower(first_prompt) LIKE ? ESCAPE '\')`)
			args = append(args, like, like)
		} else {
			where = append(where, `(lower(title) LIKE ? ESCAPE '\' OR lower(summary) LIKE ? ESCAPE '\' OR lower(task_name) LIKE ? ESCAPE '\'
				OR id LIKE ? ESCAPE '\' OR lower(COALESCE(task_id, '')) LIKE ? ESCAPE '\' OR lower(name) LIKE ? ESCAPE '\')`)
			args = append(args, like, like, like, like, like, like)
		}
	}
	for col, v := range map[string]string{"source": f.Source, "trigger_source": f.TriggerSource, "status": f.Status} {
		if v != "" {
			where = append(where, col+" = ?")
			args = append(args, v)
		}
	}
	if f.CreatedAfter != nil {
		where = append(where, "created_at >= ?")
		args = append(args, TS(*f.CreatedAfter))
	}
	if f.CreatedBefore != nil {
		where = append(where, "created_at < ?")
		args = append(args, TS(*f.CreatedBefore))
	}
	if f.MinCost != nil {
		where = append(where, "cost >= ?")
		args = append(args, *f.MinCost)
	}
	if f.MaxCost != nil {
		where = append(where, "cost <= ?")
		args = append(args, *f.MaxCost)
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM agent_sessions WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	col, ok := SessionSorts[f.Sort]
	if !ok {
		col = SessionSorts["last_activity"]
	}
	dir := " DESC"
	if f.Asc {
		dir = " ASC"
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+sessionRowCols+` FROM agent_sessions WHERE `+cond+
		` ORDER BY `+col+dir+`, id`+dir+` LIMIT ? OFFSET ?`, append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out, err := collectRows(rows, scanSessionRow)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// FindSessionRef resolves a session by id, else by name, in the tenant's
// project. Several sessions of that name: conflict (naming none of them).
func (db *DB) FindSessionRef(ctx context.Context, orgID, projectID, ref string) (*AgentSession, error) {
	if ValidID(ref) {
		s, err := db.FindProjectSession(ctx, orgID, projectID, ref)
		if !IsNotFound(err) {
			return s, err
		}
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+sessionRowCols+` FROM agent_sessions
		WHERE org_id = ? AND project_id = ? AND name = ? AND name != '' LIMIT 2`, orgID, projectID, ref)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var found []*AgentSession
	for rows.Next() {
		s, err := scanSessionRow(rows)
		if err != nil {
			return nil, err
		}
		found = append(found, s)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	switch len(found) {
	case 0:
		return nil, NotFound("session")
	case 1:
		return found[0], nil
	}
	return nil, &Error{Code: EConflict, Message: "more than one session has this name; resume it by id", Reason: "ambiguous_session_name"}
}
