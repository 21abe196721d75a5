package store

import (
	"context"
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
	q := scopedList(f.OrgID, f.ProjectID)
	if f.QLegacy {
		q.search(f.Q, "lower(title)", "lower(first_prompt)")
	} else {
		q.search(f.Q, "lower(title)", "lower(summary)", "lower(task_name)", "id", "lower(COALESCE(task_id, ''))", "lower(name)")
	}
	q.eq("source", f.Source).eq("trigger_source", f.TriggerSource).eq("status", f.Status).
		since("created_at", f.CreatedAfter, f.CreatedBefore).
		cmp("cost", ">=", f.MinCost).cmp("cost", "<=", f.MaxCost)
	col, ok := SessionSorts[f.Sort]
	if !ok {
		col = SessionSorts["last_activity"]
	}
	dir := " DESC"
	if f.Asc {
		dir = " ASC"
	}
	return listPage(ctx, db, "agent_sessions", sessionRowCols, q, col+dir+", id"+dir, nil, f.Limit, f.Offset, scanSessionRow)
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
