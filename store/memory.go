package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

// Memory scopes: a project's own memory, or one shared by every project of the org.
const (
	MemoryScopeProject = "project"
	MemoryScopeOrg     = "org"
)

// MaxMemoriesPerScope caps how many memories one project (or org) keeps.
const MaxMemoriesPerScope = 5000

// Memory is one long-term fact the agent (or a person) saved. Key is unique
// within its scope: saving the same key again updates the memory.
type Memory struct {
	ID              string
	OrgID           string
	ProjectID       string // "" for scope org
	Scope           string
	Key             string
	Title           string
	Text            string
	Tags            []string
	SourceSessionID string
	CreatedBy       string
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// MemoryFilter selects the memories a project sees (its own and its org's).
type MemoryFilter struct {
	OrgID, ProjectID string
	Scope            string // "" for both
	Query            string // substring of key, title or text
	Limit, Offset    int
}

// MemoryPatch changes a memory; nil fields stay.
type MemoryPatch struct {
	Title *string
	Text  *string
	Tags  *[]string
}

const memoryCols = `id, org_id, COALESCE(project_id, ''), scope, key, title, text, tags,
	COALESCE(source_session_id, ''), COALESCE(created_by, ''), created_at, updated_at`

func scanMemory(row interface{ Scan(...any) error }) (*Memory, error) {
	var m Memory
	var tags, created, updated string
	if err := row.Scan(&m.ID, &m.OrgID, &m.ProjectID, &m.Scope, &m.Key, &m.Title, &m.Text, &tags,
		&m.SourceSessionID, &m.CreatedBy, &created, &updated); err != nil {
		return nil, err
	}
	_ = json.Unmarshal([]byte(tags), &m.Tags)
	if m.Tags == nil {
		m.Tags = []string{}
	}
	m.CreatedAt, m.UpdatedAt = ParseTS(created), ParseTS(updated)
	return &m, nil
}

// visibleTo is the WHERE clause of the memories a project sees.
const visibleTo = `org_id = ? AND (project_id = ? OR project_id IS NULL)`

// FindMemories lists the memories a project sees, most recently updated first.
func (db *DB) FindMemories(ctx context.Context, f MemoryFilter) ([]Memory, int, error) {
	where := visibleTo
	args := []any{f.OrgID, f.ProjectID}
	if f.Scope != "" {
		where += ` AND scope = ?`
		args = append(args, f.Scope)
	}
	if f.Query != "" {
		where += ` AND (key LIKE ? ESCAPE '\' OR title LIKE ? ESCAPE '\' OR text LIKE ? ESCAPE '\')`
		like := "%" + likeEscape(f.Query) + "%"
		args = append(args, like, like, like)
	}
	var total int
	if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM memories WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+memoryCols+` FROM memories WHERE `+where+
		` ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?`, append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out, err := collectRows(rows, scanMemory)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// FindMemoryByID returns a memory the project sees (its own or its org's).
func (db *DB) FindMemoryByID(ctx context.Context, orgID, projectID, id string) (*Memory, error) {
	return findMemory(ctx, db.r, `id = ? AND `+visibleTo, id, orgID, projectID)
}

// FindMemoryByKey returns the memory of exactly one scope (projectID "" for the org's) with that key.
func (db *DB) FindMemoryByKey(ctx context.Context, orgID, projectID, key string) (*Memory, error) {
	return findMemory(ctx, db.r, `org_id = ? AND COALESCE(project_id, '') = ? AND key = ?`, orgID, projectID, key)
}

func findMemory(ctx context.Context, q Querier, where string, args ...any) (*Memory, error) {
	m, err := scanMemory(q.QueryRowContext(ctx, `SELECT `+memoryCols+` FROM memories WHERE `+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("memory")
	}
	return m, err
}

// saveMemoryTx creates m, or updates the memory of the same scope and key
// (title, text, tags, source session); it fills m from the stored row and
// reports whether it is new.
func saveMemoryTx(ctx context.Context, tx *Tx, m *Memory) (created bool, err error) {
	if m.Tags == nil {
		m.Tags = []string{}
	}
	tags, _ := json.Marshal(m.Tags)
	old, err := findMemory(ctx, tx, `org_id = ? AND COALESCE(project_id, '') = ? AND key = ?`, m.OrgID, m.ProjectID, m.Key)
	now := ParseTS(TS(tx.Now))
	switch {
	case IsNotFound(err):
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM memories WHERE org_id = ? AND COALESCE(project_id, '') = ?`,
			m.OrgID, m.ProjectID).Scan(&n); err != nil {
			return false, err
		}
		if n >= MaxMemoriesPerScope {
			return false, &Error{Code: EConflict, Message: "too many memories in this scope", Reason: "memory_limit"}
		}
		m.ID, m.CreatedAt, m.UpdatedAt = NewID(), now, now
		_, err = tx.ExecContext(ctx, `INSERT INTO memories (id, org_id, project_id, scope, key, title, text, tags,
			source_session_id, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			m.ID, m.OrgID, projectArg(m.ProjectID), m.Scope, m.Key, m.Title, m.Text, string(tags),
			nullStr(m.SourceSessionID), nullStr(m.CreatedBy), TS(now), TS(now))
		return true, err
	case err != nil:
		return false, err
	}
	m.ID, m.CreatedAt, m.UpdatedAt, m.CreatedBy = old.ID, old.CreatedAt, now, old.CreatedBy
	if m.SourceSessionID == "" {
		m.SourceSessionID = old.SourceSessionID
	}
	_, err = tx.ExecContext(ctx, `UPDATE memories SET title = ?, text = ?, tags = ?, source_session_id = ?, updated_at = ? WHERE id = ?`,
		m.Title, m.Text, string(tags), nullStr(m.SourceSessionID), TS(now), m.ID)
	return false, err
}

// updateMemoryTx applies patch to a memory the project sees and returns it.
func updateMemoryTx(ctx context.Context, tx *Tx, orgID, projectID, id string, p MemoryPatch) (*Memory, error) {
	m, err := findMemory(ctx, tx, `id = ? AND `+visibleTo, id, orgID, projectID)
	if err != nil {
		return nil, err
	}
	if p.Title != nil {
		m.Title = *p.Title
	}
	if p.Text != nil {
		m.Text = *p.Text
	}
	if p.Tags != nil {
		m.Tags = *p.Tags
	}
	tags, _ := json.Marshal(m.Tags)
	m.UpdatedAt = ParseTS(TS(tx.Now))
	_, err = tx.ExecContext(ctx, `UPDATE memories SET title = ?, text = ?, tags = ?, updated_at = ? WHERE id = ?`,
		m.Title, m.Text, string(tags), TS(m.UpdatedAt), m.ID)
	return m, err
}

// deleteMemoryTx removes a memory the project sees and returns what it was.
func deleteMemoryTx(ctx context.Context, tx *Tx, orgID, projectID, id string) (*Memory, error) {
	m, err := findMemory(ctx, tx, `id = ? AND `+visibleTo, id, orgID, projectID)
	if err != nil {
		return nil, err
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM memories WHERE id = ?`, id)
	return m, err
}

// FindMemoriesAfter pages through every memory of every tenant by id, for
// maintenance (re-indexing after a restore) only: never behind a route.
func (db *DB) FindMemoriesAfter(ctx context.Context, afterID string, limit int) ([]Memory, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+memoryCols+` FROM memories WHERE id > ? ORDER BY id LIMIT ?`, afterID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Memory
	for rows.Next() {
		m, err := scanMemory(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *m)
	}
	return out, rows.Err()
}

// memoryExistsTx reports whether a memory row exists, inside a write transaction.
func memoryExistsTx(ctx context.Context, tx *Tx, id string) (bool, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM memories WHERE id = ?`, id).Scan(&n)
	return n > 0, err
}

// findMemoryTx re-reads one memory inside a write transaction.
func findMemoryTx(ctx context.Context, tx *Tx, id string) (*Memory, error) {
	return findMemory(ctx, tx, `id = ?`, id)
}

// TenantScopes lists every (org, project) pair and every org alone (project ""), for maintenance.
func (db *DB) TenantScopes(ctx context.Context) ([][2]string, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT org_id, id FROM projects UNION ALL SELECT id, '' FROM organizations`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var s [2]string
		if err := rows.Scan(&s[0], &s[1]); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
