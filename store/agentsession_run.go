package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// A session's life as the agent runner drives it. Chat sessions are created
// running and go back to running for every further turn (chat or resume);
// task runs are moved by the task scheduler and only their counters and
// transcript are written here.

const sessionRowCols = agentSessionCols + `, waiting_approval, turns, steps, tool_calls, approvals`

func scanSessionRow(row interface{ Scan(...any) error }) (*AgentSession, error) {
	var s AgentSession
	var taskID, createdBy, started, ended sql.NullString
	var last, created, updated string
	if err := row.Scan(&s.ID, &s.OrgID, &s.ProjectID, &s.Name, &s.Title, &s.Summary, &s.FirstPrompt, &taskID, &s.TaskName,
		&s.AgentType, &s.Source, &s.TriggerSource, &s.Status, &s.Reason, &s.Model, &createdBy, &s.TokensIn, &s.TokensOut,
		&s.Cost, &s.DurationMS, &started, &ended, &last, &created, &updated,
		&s.WaitingApproval, &s.Turns, &s.Steps, &s.ToolCalls, &s.Approvals); err != nil {
		return nil, err
	}
	s.TaskID, s.CreatedBy = taskID.String, createdBy.String
	s.StartedAt, s.EndedAt = scanNullTS(started), scanNullTS(ended)
	s.LastActivity, s.CreatedAt, s.UpdatedAt = ParseTS(last), ParseTS(created), ParseTS(updated)
	return &s, nil
}

// FindProjectSession returns a session of the tenant's project with every
// counter; another tenant's id reads as not found.
func (db *DB) FindProjectSession(ctx context.Context, orgID, projectID, id string) (*AgentSession, error) {
	return findProjectSession(ctx, db.r, orgID, projectID, id)
}

func findProjectSession(ctx context.Context, q Querier, orgID, projectID, id string) (*AgentSession, error) {
	s, err := scanSessionRow(q.QueryRowContext(ctx, `SELECT `+sessionRowCols+` FROM agent_sessions
		WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("session")
	}
	return s, err
}

// StartChatSession inserts a new session already running its first turn.
func (db *DB) StartChatSession(ctx context.Context, s *AgentSession) error {
	return db.Write(ctx, func(tx *Tx) error {
		s.Status = SessionRunning
		t := tx.Now
		s.StartedAt = &t
		if err := CreateAgentSessionTx(ctx, tx, s); err != nil {
			return err
		}
		s.Turns = 1
		_, err := tx.ExecContext(ctx, `UPDATE agent_sessions SET turns = 1 WHERE id = ?`, s.ID)
		return err
	})
}

// Turn is a turn that BeginTurn started (or, Replayed, the one an earlier
// request with the same Idempotency-Key started).
type Turn struct {
	Session  *AgentSession
	Turn     int
	FirstSeq int64 // the first event number of the turn
	Replayed bool
}

// BeginTurn moves a finished session back to running for one more turn.
// It answers not found when the session is not the tenant's or has no
// transcript to continue (a task run that never started), conflict when
// it is running (or waiting for an approval). idemKey, when not "",
// makes the call idempotent per session.
func (db *DB) BeginTurn(ctx context.Context, orgID, projectID, id, idemKey string) (*Turn, error) {
	var out *Turn
	err := db.Write(ctx, func(tx *Tx) error {
		s, err := findProjectSession(ctx, tx, orgID, projectID, id)
		if err != nil {
			return err
		}
		if idemKey != "" {
			var turn int
			var first int64
			err := tx.QueryRowContext(ctx, `SELECT turn, first_seq FROM session_resumes WHERE session_id = ? AND idem_key = ?`, id, idemKey).Scan(&turn, &first)
			if err == nil {
				out = &Turn{Session: s, Turn: turn, FirstSeq: first, Replayed: true}
				return nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		if s.Status == SessionRunning || s.Status == SessionPending {
			if s.Status == SessionPending {
				return &Error{Code: ENotFound, Message: "session cannot be resumed: it has not run yet", Reason: "not_resumable"}
			}
			msg := "session is running; wait for it to finish or cancel it"
			if s.WaitingApproval {
				msg = "session is waiting for an approval decision"
			}
			return &Error{Code: EConflict, Message: msg, Reason: "session_running"}
		}
		if _, err := findTranscript(ctx, tx, orgID, id); err != nil {
			if IsNotFound(err) {
				return &Error{Code: ENotFound, Message: "session cannot be resumed: it has no conversation to continue", Reason: "not_resumable"}
			}
			return err
		}
		var last int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM session_events WHERE session_id = ?`, id).Scan(&last); err != nil {
			return err
		}
		now := TS(tx.Now)
		if _, err := tx.ExecContext(ctx, `UPDATE agent_sessions SET status = ?, reason = '', waiting_approval = 0, turns = turns + 1,
			ended_at = NULL, last_activity = ?, updated_at = ? WHERE id = ?`, SessionRunning, now, now, id); err != nil {
			return err
		}
		s.Status, s.Reason, s.EndedAt, s.Turns, s.LastActivity = SessionRunning, "", nil, s.Turns+1, tx.Now
		if idemKey != "" {
			if _, err := tx.ExecContext(ctx, `INSERT INTO session_resumes (session_id, idem_key, turn, first_seq, created_at) VALUES (?,?,?,?,?)`,
				id, idemKey, s.Turns, last+1, now); err != nil {
				return err
			}
		}
		out = &Turn{Session: s, Turn: s.Turns, FirstSeq: last + 1}
		return nil
	})
	return out, err
}

// TurnEnd is what one turn of the agent produced.
type TurnEnd struct {
	// Status is the session's status after the turn: a terminal one, or
	// running with WaitingApproval.
	Status          string
	WaitingApproval bool
	Reason          string
	Summary         string // "" keeps the previous one
	Model           string
	TokensIn        int64
	TokensOut       int64
	Cost            float64
	Duration        time.Duration
	Steps           int
	ToolCalls       int
	Messages        string // JSON transcript
	Pending         string // JSON agent.Pending, "" when not waiting
	// CountersOnly is for task runs, whose status, tokens, cost and
	// duration the task scheduler writes: only transcript and counters.
	CountersOnly bool
	// Final, when set, returns the turn's last events (done) from the
	// session row as this transaction left it; they are stored in the same
	// transaction, so a reader who sees the status settled sees them too.
	// It may be called more than once (Write retries); its last result is
	// what was stored.
	Final func(s *AgentSession) []SessionEvent
	// OrgID and ProjectID scope the row Final is given.
	OrgID, ProjectID string
}

// EndTurn records the end of a turn (transcript, counters, status) in one
// transaction, while the session is still running; false when it no longer
// was (cancelled from elsewhere).
func (db *DB) EndTurn(ctx context.Context, id string, e TurnEnd) (bool, error) {
	ok := false
	err := db.writeHot(ctx, func(tx *Tx) error {
		approvals := 0
		if e.WaitingApproval {
			approvals = 1
		}
		now := TS(tx.Now)
		var res sql.Result
		var err error
		if e.CountersOnly {
			res, err = tx.ExecContext(ctx, `UPDATE agent_sessions SET steps = steps + ?, tool_calls = tool_calls + ?, approvals = approvals + ?,
				waiting_approval = ?, last_activity = ?, updated_at = ? WHERE id = ? AND status = ?`,
				e.Steps, e.ToolCalls, approvals, e.WaitingApproval, now, now, id, SessionRunning)
		} else {
			var ended any
			if Terminal(e.Status) {
				ended = now
			}
			res, err = tx.ExecContext(ctx, `UPDATE agent_sessions SET status = ?, reason = ?, waiting_approval = ?,
				summary = CASE WHEN ? = '' THEN summary ELSE ? END, model = CASE WHEN ? = '' THEN model ELSE ? END,
				tokens_in = tokens_in + ?, tokens_out = tokens_out + ?, cost = cost + ?, duration_ms = duration_ms + ?,
				steps = steps + ?, tool_calls = tool_calls + ?, approvals = approvals + ?,
				ended_at = ?, last_activity = ?, updated_at = ? WHERE id = ? AND status = ?`,
				e.Status, e.Reason, e.WaitingApproval, e.Summary, e.Summary, e.Model, e.Model,
				e.TokensIn, e.TokensOut, e.Cost, e.Duration.Milliseconds(), e.Steps, e.ToolCalls, approvals,
				ended, now, now, id, SessionRunning)
		}
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		// The transcript is kept even when the status moved meanwhile: it is what happened.
		if err := saveTranscriptTx(ctx, tx, id, e.Messages, e.Pending); err != nil {
			return err
		}
		if err := deleteCheckpointTx(ctx, tx, id); err != nil {
			return err
		}
		ok = n == 1
		if e.Final == nil {
			return nil
		}
		s, err := findProjectSession(ctx, tx, e.OrgID, e.ProjectID, id)
		if err != nil {
			return err
		}
		return insertSessionEventsTx(ctx, tx, id, e.Final(s))
	})
	return ok, err
}

// CancelIdleSession cancels a session that no goroutine is running: a
// pending task run, or a session waiting for an approval. It reports false
// when the session is in neither state (the caller then cancels the live run
// or answers conflict).
func (db *DB) CancelIdleSession(ctx context.Context, orgID, projectID, id, reason string) (bool, error) {
	ok := false
	err := db.Write(ctx, func(tx *Tx) error {
		s, err := findProjectSession(ctx, tx, orgID, projectID, id)
		if err != nil {
			return err
		}
		if s.Status != SessionPending && !(s.Status == SessionRunning && s.WaitingApproval) {
			return nil
		}
		now := TS(tx.Now)
		res, err := tx.ExecContext(ctx, `UPDATE agent_sessions SET status = ?, reason = ?, waiting_approval = 0, ended_at = ?,
			last_activity = ?, updated_at = ? WHERE id = ? AND status = ?`, SessionCancelled, reason, now, now, now, id, s.Status)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		if n == 1 {
			_, err = tx.ExecContext(ctx, `UPDATE session_transcripts SET pending = '' WHERE session_id = ?`, id)
		}
		ok = n == 1
		return err
	})
	return ok, err
}

// FailInterruptedChats fails sessions left running by a stopped process that
// are not task runs (the task scheduler recovers those), not waiting for
// an approval (that wait survives a restart) and left no checkpoint (those
// resume: run_checkpoint.go).
func (db *DB) FailInterruptedChats(ctx context.Context, reason string) (int, error) {
	var n int64
	err := db.Write(ctx, func(tx *Tx) error {
		now := TS(tx.Now)
		res, err := tx.ExecContext(ctx, `UPDATE agent_sessions SET status = ?, reason = ?, ended_at = ?, last_activity = ?, updated_at = ?
			WHERE status = ? AND waiting_approval = 0 AND id NOT IN (SELECT session_id FROM task_runs)
			AND id NOT IN (SELECT session_id FROM run_checkpoints)`,
			SessionFailed, reason, now, now, now, SessionRunning)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// ClaimApprovalWait takes a session out of its wait for an approval so one
// caller continues it; false when it was not waiting (already continued,
// cancelled, or another tenant's).
func (db *DB) ClaimApprovalWait(ctx context.Context, orgID, id string) (bool, error) {
	ok := false
	err := db.Write(ctx, func(tx *Tx) error {
		now := TS(tx.Now)
		res, err := tx.ExecContext(ctx, `UPDATE agent_sessions SET waiting_approval = 0, turns = turns + 1, last_activity = ?, updated_at = ?
			WHERE id = ? AND org_id = ? AND status = ? AND waiting_approval = 1`, now, now, id, orgID, SessionRunning)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		ok = n == 1
		return err
	})
	return ok, err
}

// The source and trigger of sessions started from the web chat.
const (
	SourceWebchat = "webchat"
	TriggerWeb    = "web"
)

// WithdrawSessionApprovals ends the pending approvals of a cancelled session:
// a call the session no longer waits for cannot be approved any more, so
// deciding it later is a conflict rather than a silent no-op.
func (db *DB) WithdrawSessionApprovals(ctx context.Context, orgID, sessionID string) error {
	return db.Write(ctx, func(tx *Tx) error {
		now := TS(tx.Now)
		_, err := tx.ExecContext(ctx, `UPDATE approvals SET status = 'expired', comment = 'withdrawn: the session was cancelled',
			decided_at = ?, updated_at = ? WHERE session_id = ? AND org_id = ? AND status = 'pending'`, now, now, sessionID, orgID)
		return err
	})
}
