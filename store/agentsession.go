package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Agent session statuses (spec section 2). Terminal ones never change again.
const (
	SessionPending   = "pending"
	SessionRunning   = "running"
	SessionCompleted = "completed"
	SessionFailed    = "failed"
	SessionCancelled = "cancelled"
	SessionTimeout   = "timeout"
)

// AgentSession is one conversation or run of the agent, whatever started it
// (chat, a task, a webhook). Chat, tasks and webhooks share this one table.
type AgentSession struct {
	ID            string
	OrgID         string
	ProjectID     string
	Name          string
	Title         string
	Summary       string
	FirstPrompt   string
	TaskID        string // "" when not started by a task
	TaskName      string
	AgentType     string
	Source        string // webchat, telegram, slack, whatsapp, task
	TriggerSource string // manual, scheduled, webhook, web
	Status        string
	Reason        string // why it failed, was cancelled or skipped
	Model         string
	CreatedBy     string
	TokensIn      int64
	TokensOut     int64
	Cost          float64
	DurationMS    int64
	StartedAt     *time.Time
	EndedAt       *time.Time
	LastActivity  time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// Filled by the session reads of agentsession_*.go (0005), zero elsewhere.
	WaitingApproval bool // running, stopped at a tool call a person must decide on
	Turns           int  // runs of the agent in this session
	Steps           int  // model calls, all turns
	ToolCalls       int
	Approvals       int // times a turn stopped for approval
}

// Terminal reports whether status is final.
func Terminal(status string) bool {
	switch status {
	case SessionCompleted, SessionFailed, SessionCancelled, SessionTimeout:
		return true
	}
	return false
}

const agentSessionCols = `id, org_id, project_id, name, title, summary, first_prompt, task_id, task_name, agent_type,
	source, trigger_source, status, reason, model, created_by, tokens_in, tokens_out, cost, duration_ms,
	started_at, ended_at, last_activity, created_at, updated_at`

func scanAgentSession(row interface{ Scan(...any) error }) (*AgentSession, error) {
	var s AgentSession
	var taskID, createdBy, started, ended sql.NullString
	var last, created, updated string
	if err := row.Scan(&s.ID, &s.OrgID, &s.ProjectID, &s.Name, &s.Title, &s.Summary, &s.FirstPrompt, &taskID, &s.TaskName,
		&s.AgentType, &s.Source, &s.TriggerSource, &s.Status, &s.Reason, &s.Model, &createdBy, &s.TokensIn, &s.TokensOut,
		&s.Cost, &s.DurationMS, &started, &ended, &last, &created, &updated); err != nil {
		return nil, err
	}
	s.TaskID, s.CreatedBy = taskID.String, createdBy.String
	s.StartedAt, s.EndedAt = scanNullTS(started), scanNullTS(ended)
	s.LastActivity, s.CreatedAt, s.UpdatedAt = ParseTS(last), ParseTS(created), ParseTS(updated)
	return &s, nil
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// insertAgentSession: callers use only its error, to abandon the
// transaction (PostgreSQL pipelines it: pgDeferrable).
const insertAgentSession = `INSERT INTO agent_sessions (` + agentSessionCols + `)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`

// CreateAgentSessionTx inserts s, filling its id (when empty) and times.
func CreateAgentSessionTx(ctx context.Context, tx *Tx, s *AgentSession) error {
	if s.ID == "" {
		s.ID = NewID()
	}
	if s.AgentType == "" {
		s.AgentType = "general"
	}
	if s.Status == "" {
		s.Status = SessionPending
	}
	s.CreatedAt, s.UpdatedAt, s.LastActivity = tx.Now, tx.Now, tx.Now
	if Terminal(s.Status) && s.EndedAt == nil {
		t := tx.Now
		s.EndedAt = &t
	}
	_, err := tx.ExecContext(ctx, insertAgentSession,
		s.ID, s.OrgID, s.ProjectID, s.Name, s.Title, s.Summary, s.FirstPrompt, nullStr(s.TaskID), s.TaskName, s.AgentType,
		s.Source, s.TriggerSource, s.Status, s.Reason, s.Model, nullStr(s.CreatedBy), s.TokensIn, s.TokensOut, s.Cost,
		s.DurationMS, nullTS(s.StartedAt), nullTS(s.EndedAt), TS(s.LastActivity), TS(s.CreatedAt), TS(s.UpdatedAt))
	return err
}

// FindAgentSession returns the session only if it belongs to orgID.
func (db *DB) FindAgentSession(ctx context.Context, orgID, id string) (*AgentSession, error) {
	return findAgentSession(ctx, db.r, orgID, id)
}

func findAgentSession(ctx context.Context, q Querier, orgID, id string) (*AgentSession, error) {
	s, err := scanAgentSession(q.QueryRowContext(ctx, `SELECT `+agentSessionCols+` FROM agent_sessions WHERE id = ? AND org_id = ?`, id, orgID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("session")
	}
	return s, err
}

// SessionTransition moves a session from one status to another. From guards
// the move: the update applies only while the session is still in From, so
// two callers racing for the same session cannot both win.
type SessionTransition struct {
	From, To  string
	Reason    string
	Model     string
	Summary   string
	TokensIn  int64
	TokensOut int64
	Cost      float64
}

// transitionAgentSessionTx applies t to session id; it reports false when the
// session was no longer in t.From. An empty Reason keeps the one recorded
// (a catch-up note survives a completed run). Starting stamps started_at; reaching a
// terminal status stamps ended_at and the duration since the start.
func transitionAgentSessionTx(ctx context.Context, tx *Tx, id string, t SessionTransition) (bool, error) {
	now := TS(tx.Now)
	var res sql.Result
	var err error
	switch {
	case t.To == SessionRunning:
		res, err = tx.ExecContext(ctx, `UPDATE agent_sessions SET status = ?, started_at = ?, last_activity = ?, updated_at = ?
			WHERE id = ? AND status = ?`, t.To, now, now, now, id, t.From)
	case Terminal(t.To):
		var started sql.NullString
		if err := tx.QueryRowContext(ctx, `SELECT started_at FROM agent_sessions WHERE id = ?`, id).Scan(&started); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return false, nil
			}
			return false, err
		}
		var dur int64
		if st := scanNullTS(started); st != nil {
			dur = tx.Now.Sub(*st).Milliseconds()
		}
		res, err = tx.ExecContext(ctx, `UPDATE agent_sessions SET status = ?, reason = CASE WHEN ? = '' THEN reason ELSE ? END,
			model = CASE WHEN ? = '' THEN model ELSE ? END, summary = CASE WHEN ? = '' THEN summary ELSE ? END,
			tokens_in = tokens_in + ?, tokens_out = tokens_out + ?, cost = cost + ?,
			ended_at = ?, last_activity = ?, updated_at = ?, duration_ms = ?
			WHERE id = ? AND status = ?`,
			t.To, t.Reason, t.Reason, t.Model, t.Model, t.Summary, t.Summary, t.TokensIn, t.TokensOut, t.Cost, now, now, now, dur, id, t.From)
	default:
		res, err = tx.ExecContext(ctx, `UPDATE agent_sessions SET status = ?, reason = ?, last_activity = ?, updated_at = ?
			WHERE id = ? AND status = ?`, t.To, t.Reason, now, now, id, t.From)
	}
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
