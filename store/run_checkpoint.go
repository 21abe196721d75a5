package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
)

// RunCheckpoint is a running turn's last checkpoint: its state (the
// runner's JSON) and transcript (Messages, from run_checkpoint_messages), and how
// many times the turn was resumed already.
type RunCheckpoint struct {
	SessionID, OrgID, ProjectID string
	State, Messages             string
	Resumes                     int
}

const upsertCheckpoint = `INSERT INTO run_checkpoints (session_id, state, resumes, created_at, updated_at) VALUES (?,?,?,?,?)
	ON CONFLICT(session_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`

// CheckpointWrite is one checkpoint: the turn's step state and the
// transcript's messages from index From on (each one's JSON), those before
// From being unchanged since the last checkpoint.
type CheckpointWrite struct {
	State    string
	From     int
	Messages []string
	// Waiting: the run waits for a decision (a task run's approval wait):
	// the session stays waiting, and the checkpoint is what its resume
	// after a restart waits again from (FindInterruptedRuns).
	Waiting bool
}

// SaveCheckpoint stores a turn's events so far, the messages its transcript
// gained (run_checkpoint_messages) and its step state in one transaction:
// after a crash the events stored and the checkpoint agree, so the resumed
// turn repeats no step whose events were kept and numbers its own after
// them. Only the new messages are written, so a long run's checkpoints cost
// what it adds, not what it holds. The session's last activity moves with
// it (a cluster's sweep reads it).
func (db *DB) SaveCheckpoint(ctx context.Context, sessionID string, evs []SessionEvent, cp CheckpointWrite) error {
	return db.writeHot(ctx, func(tx *Tx) error {
		if err := insertSessionEventsTx(ctx, tx, sessionID, evs); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM run_checkpoint_messages WHERE session_id = ? AND idx >= ?`, sessionID, cp.From); err != nil {
			return err
		}
		for i, m := range cp.Messages {
			if _, err := tx.ExecContext(ctx, `INSERT INTO run_checkpoint_messages (session_id, idx, message) VALUES (?,?,?)`,
				sessionID, cp.From+i, m); err != nil {
				return err
			}
		}
		now := TS(tx.Now)
		if _, err := tx.ExecContext(ctx, upsertCheckpoint, sessionID, cp.State, 0, now, now); err != nil {
			return err
		}
		// A turn that checkpoints runs: a task run's turn after a decision
		// is no longer waiting for it (its resume finds it: FindInterruptedRuns).
		_, err := tx.ExecContext(ctx, `UPDATE agent_sessions SET last_activity = ?, waiting_approval = ? WHERE id = ?`, now, cp.Waiting, sessionID)
		return err
	})
}

func deleteCheckpointTx(ctx context.Context, tx *Tx, sessionID string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM run_checkpoint_messages WHERE session_id = ?`, sessionID); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM run_checkpoints WHERE session_id = ?`, sessionID)
	return err
}

// checkpointMessages is a running turn's transcript so far as one JSON
// array, from its checkpoint's rows; ok false when it has none.
func checkpointMessages(ctx context.Context, q Querier, sessionID string) (string, bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT message FROM run_checkpoint_messages WHERE session_id = ? ORDER BY idx`, sessionID)
	if err != nil {
		return "", false, err
	}
	defer rows.Close()
	var b strings.Builder
	b.WriteByte('[')
	n := 0
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return "", false, err
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(m)
		n++
	}
	if err := rows.Err(); err != nil {
		return "", false, err
	}
	b.WriteByte(']')
	return b.String(), n > 0, nil
}

// CheckpointedRuns lists the chat sessions still running (not waiting for a
// decision) whose turn left a checkpoint (task runs are the scheduler's to
// resume: FindInterruptedRuns): on one server at start, every
// such turn was cut by the last stop; on a cluster the caller takes each
// one's run lock (TryHoldRun) before resuming it, so a live turn is skipped.
func (db *DB) CheckpointedRuns(ctx context.Context) ([]RunCheckpoint, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT c.session_id, s.org_id, s.project_id FROM run_checkpoints c
		JOIN agent_sessions s ON s.id = c.session_id WHERE s.status = 'running' AND s.waiting_approval = 0
		AND NOT EXISTS (SELECT 1 FROM task_runs r WHERE r.session_id = c.session_id)
		ORDER BY c.updated_at LIMIT 500`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RunCheckpoint
	for rows.Next() {
		var c RunCheckpoint
		if err := rows.Scan(&c.SessionID, &c.OrgID, &c.ProjectID); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ClaimCheckpoint reads a cut turn's checkpoint and counts one more resume
// of it, in one transaction; not found when the turn ended meanwhile (no
// checkpoint, or the session no longer running). The caller holds the run.
func (db *DB) ClaimCheckpoint(ctx context.Context, orgID, sessionID string) (*RunCheckpoint, error) {
	var out *RunCheckpoint
	err := db.Write(ctx, func(tx *Tx) error {
		c := RunCheckpoint{SessionID: sessionID}
		err := tx.QueryRowContext(ctx, `SELECT c.state, c.resumes, s.project_id FROM run_checkpoints c
			JOIN agent_sessions s ON s.id = c.session_id
			WHERE c.session_id = ? AND s.org_id = ? AND s.status = 'running'
			AND (s.waiting_approval = 0 OR EXISTS (SELECT 1 FROM task_runs r WHERE r.session_id = s.id))`, sessionID, orgID).
			Scan(&c.State, &c.Resumes, &c.ProjectID)
		if errors.Is(err, sql.ErrNoRows) {
			return NotFound("checkpoint")
		}
		if err != nil {
			return err
		}
		msgs, ok, err := checkpointMessages(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		if !ok {
			return NotFound("checkpoint transcript")
		}
		c.Messages = msgs
		c.OrgID = orgID
		c.Resumes++
		_, err = tx.ExecContext(ctx, `UPDATE run_checkpoints SET resumes = ?, updated_at = ? WHERE session_id = ?`, c.Resumes, TS(tx.Now), sessionID)
		out = &c
		return err
	})
	return out, err
}

// DecidedWait is a chat session waiting for a decision on a tool call whose
// approval is decided: a decision no server acted on yet.
type DecidedWait struct {
	SessionID, OrgID, ProjectID string
	CallID                      string
	Status, Comment, DecidedBy  string
}

// DecidedWaits lists chat sessions still waiting for a tool call's approval
// that is decided (approved, denied or expired), newest decision first.
// Task runs wait inside their run (runner.awaitDecision) and are not listed.
func (db *DB) DecidedWaits(ctx context.Context) ([]DecidedWait, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT s.id, s.org_id, s.project_id, a.subject, a.status, a.comment, COALESCE(a.decided_by, '')
		FROM agent_sessions s JOIN approvals a ON a.session_id = s.id
		WHERE s.status = 'running' AND s.waiting_approval = 1 AND a.kind = ? AND a.status <> 'pending'
		AND NOT EXISTS (SELECT 1 FROM task_runs r WHERE r.session_id = s.id)
		ORDER BY a.created_at DESC LIMIT 500`, ApprovalToolCall)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []DecidedWait
	for rows.Next() {
		var w DecidedWait
		var subject string
		if err := rows.Scan(&w.SessionID, &w.OrgID, &w.ProjectID, &subject, &w.Status, &w.Comment, &w.DecidedBy); err != nil {
			return nil, err
		}
		var s struct {
			CallID string `json:"call_id"`
		}
		if json.Unmarshal([]byte(subject), &s) != nil || s.CallID == "" {
			continue
		}
		w.CallID = s.CallID
		out = append(out, w)
	}
	return out, rows.Err()
}

// queryInterruptedTaskRuns: running task runs that left a checkpoint,
// those waiting for a decision included (their checkpoint records the wait)
// ('running' spelled out for the partial index).
const queryInterruptedTaskRuns = pendingRunCols + `
	WHERE s.status = 'running'
	AND EXISTS (SELECT 1 FROM run_checkpoints c WHERE c.session_id = s.id)
	ORDER BY s.created_at LIMIT ?`

// FindInterruptedRuns lists task runs (scheduled, manual, webhook) still
// running with a checkpoint, with their task's settings, oldest first: on
// one server at start every one was cut by the last stop; on a cluster the
// scheduler takes each one's run lock (TryHoldRun) before resuming it, so a
// run live on another server is skipped.
func (db *DB) FindInterruptedRuns(ctx context.Context, limit int) ([]PendingRun, error) {
	rows, err := db.readRows(ctx, queryInterruptedTaskRuns, limit)
	if err != nil {
		return nil, err
	}
	return scanRunsInStatus(rows, SessionRunning, nil)
}
