package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// SessionEvent is one streamed event of a session, numbered per session
// (Seq is the SSE id). Data is the JSON payload as it was sent.
type SessionEvent struct {
	Seq       int64
	Type      string
	Data      string
	CreatedAt time.Time
}

// A session's events and transcript; callers use only the error, to abandon
// the transaction (PostgreSQL pipelines them: pgDeferrable). A repeated seq
// still fails the transaction, from its COMMIT.
const (
	insertSessionEvent = `INSERT INTO session_events (session_id, seq, type, data, created_at) VALUES (?,?,?,?,?)`
	upsertTranscript   = `INSERT INTO session_transcripts (session_id, messages, pending, updated_at) VALUES (?,?,?,?)
		ON CONFLICT(session_id) DO UPDATE SET messages = excluded.messages, pending = excluded.pending, updated_at = excluded.updated_at`
)

// AppendSessionEvents stores a batch of a session's events in one transaction.
// The runner numbers them; a repeated seq is an error (two writers).
func (db *DB) AppendSessionEvents(ctx context.Context, sessionID string, evs []SessionEvent) error {
	if len(evs) == 0 {
		return nil
	}
	return db.writeHot(ctx, func(tx *Tx) error { return insertSessionEventsTx(ctx, tx, sessionID, evs) })
}

func insertSessionEventsTx(ctx context.Context, tx *Tx, sessionID string, evs []SessionEvent) error {
	for _, e := range evs {
		at := e.CreatedAt
		if at.IsZero() {
			at = tx.Now
		}
		if _, err := tx.ExecContext(ctx, insertSessionEvent, sessionID, e.Seq, e.Type, e.Data, TS(at)); err != nil {
			return err
		}
	}
	return nil
}

// SessionEventsAfter returns up to limit events with seq > after, in order.
// The caller has already checked the session belongs to the tenant.
func (db *DB) SessionEventsAfter(ctx context.Context, sessionID string, after int64, limit int) ([]SessionEvent, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT seq, type, data, created_at FROM session_events
		WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`, sessionID, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SessionEvent
	for rows.Next() {
		var e SessionEvent
		var at string
		if err := rows.Scan(&e.Seq, &e.Type, &e.Data, &at); err != nil {
			return nil, err
		}
		e.CreatedAt = ParseTS(at)
		out = append(out, e)
	}
	return out, rows.Err()
}

// LastSessionSeq is the highest stored event number of a session (0 when none).
func (db *DB) LastSessionSeq(ctx context.Context, sessionID string) (int64, error) {
	var n int64
	err := db.r.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM session_events WHERE session_id = ?`, sessionID).Scan(&n)
	return n, err
}

// Transcript is a session's stored conversation: Messages is the JSON
// []llm.Message of the agent library, Pending the JSON agent.Pending while
// the session waits for an approval ("" otherwise).
type Transcript struct {
	SessionID string
	Messages  string
	Pending   string
	UpdatedAt time.Time
}

// FindTranscript returns the transcript of a session of orgID; not found
// when the session is another tenant's or never ran.
func (db *DB) FindTranscript(ctx context.Context, orgID, sessionID string) (*Transcript, error) {
	return findTranscript(ctx, db.r, orgID, sessionID)
}

func findTranscript(ctx context.Context, q Querier, orgID, sessionID string) (*Transcript, error) {
	var t Transcript
	var at string
	err := q.QueryRowContext(ctx, `SELECT t.session_id, t.messages, t.pending, t.updated_at FROM session_transcripts t
		JOIN agent_sessions s ON s.id = t.session_id WHERE t.session_id = ? AND s.org_id = ?`, sessionID, orgID).
		Scan(&t.SessionID, &t.Messages, &t.Pending, &at)
	if errors.Is(err, sql.ErrNoRows) {
		// A first turn still running has only its checkpoint's messages.
		err = q.QueryRowContext(ctx, `SELECT id, '', '', last_activity FROM agent_sessions WHERE id = ? AND org_id = ?
			AND EXISTS (SELECT 1 FROM run_checkpoint_messages m WHERE m.session_id = ?)`, sessionID, orgID, sessionID).
			Scan(&t.SessionID, &t.Messages, &t.Pending, &at)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("transcript")
	}
	if err != nil {
		return nil, err
	}
	// A running turn's transcript so far is its checkpoint's (the row
	// above holds the transcript as of its last turn's end).
	if msgs, ok, err := checkpointMessages(ctx, q, sessionID); err != nil {
		return nil, err
	} else if ok {
		t.Messages, t.Pending = msgs, ""
	}
	t.UpdatedAt = ParseTS(at)
	return &t, nil
}

func saveTranscriptTx(ctx context.Context, tx *Tx, sessionID, messages, pending string) error {
	_, err := tx.ExecContext(ctx, upsertTranscript, sessionID, messages, pending, TS(tx.Now))
	return err
}
