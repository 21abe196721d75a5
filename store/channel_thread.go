package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// ChannelThread ties one chat thread to its session.
type ChannelThread struct {
	ChannelID     string
	ThreadKey     string // conversation + thread, the platform's thread identity
	Conversation  string // Slack channel, Telegram chat id, WhatsApp number
	Thread        string // Slack thread_ts, Telegram topic id, "" for WhatsApp
	SessionID     string
	LastInboundAt time.Time
	CreatedAt     time.Time
}

// ErrDuplicateDelivery answers a platform delivery processed before.
var ErrDuplicateDelivery = &Error{Code: EConflict, Message: "delivery already processed", Reason: "duplicate_delivery"}

const channelThreadCols = `channel_id, thread_key, conversation, thread, session_id, last_inbound_at, created_at`

func scanChannelThread(row interface{ Scan(...any) error }) (*ChannelThread, error) {
	var t ChannelThread
	var last, created string
	if err := row.Scan(&t.ChannelID, &t.ThreadKey, &t.Conversation, &t.Thread, &t.SessionID, &last, &created); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, NotFound("channel thread")
		}
		return nil, err
	}
	t.LastInboundAt, t.CreatedAt = ParseTS(last), ParseTS(created)
	return &t, nil
}

// claimDeliveryTx records a delivery key; ErrDuplicateDelivery when it was seen.
func claimDeliveryTx(ctx context.Context, tx *Tx, channelID, key string) error {
	if key == "" {
		return nil
	}
	res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO channel_deliveries (channel_id, delivery_key, created_at) VALUES (?,?,?)`,
		channelID, key, TS(tx.Now))
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrDuplicateDelivery
	}
	return nil
}

// ClaimChannelDelivery records a delivery key on its own (button clicks,
// link codes); ErrDuplicateDelivery when it was processed before.
func (db *DB) ClaimChannelDelivery(ctx context.Context, channelID, key string) error {
	return db.Write(ctx, func(tx *Tx) error { return claimDeliveryTx(ctx, tx, channelID, key) })
}

// ChannelMessage is one inbound message as OpenChannelTurn records it.
type ChannelMessage struct {
	DeliveryKey string
	Thread      ChannelThread // ChannelID, ThreadKey, Conversation, Thread
	Session     *AgentSession // the session to create when the thread has none
}

// OpenChannelTurn claims a delivery and finds its thread's session, in one
// transaction: when the thread has none, m.Session is created running (its
// first turn) and fresh is true; otherwise the thread's last inbound time
// moves and the caller continues the existing session.
func (db *DB) OpenChannelTurn(ctx context.Context, m *ChannelMessage) (thread *ChannelThread, fresh bool, err error) {
	err = db.Write(ctx, func(tx *Tx) error {
		if err := claimDeliveryTx(ctx, tx, m.Thread.ChannelID, m.DeliveryKey); err != nil {
			return err
		}
		t, err := scanChannelThread(tx.QueryRowContext(ctx, `SELECT `+channelThreadCols+` FROM channel_threads
			WHERE channel_id = ? AND thread_key = ?`, m.Thread.ChannelID, m.Thread.ThreadKey))
		if err == nil {
			t.LastInboundAt = tx.Now
			_, err = tx.ExecContext(ctx, `UPDATE channel_threads SET last_inbound_at = ? WHERE channel_id = ? AND thread_key = ?`,
				TS(tx.Now), t.ChannelID, t.ThreadKey)
			thread = t
			return err
		}
		if !IsNotFound(err) {
			return err
		}
		if err := startThreadSessionTx(ctx, tx, m.Session); err != nil {
			return err
		}
		s := m.Session
		t = &m.Thread
		t.SessionID, t.LastInboundAt, t.CreatedAt = s.ID, tx.Now, tx.Now
		_, err = tx.ExecContext(ctx, `INSERT INTO channel_threads (`+channelThreadCols+`) VALUES (?,?,?,?,?,?,?)`,
			t.ChannelID, t.ThreadKey, t.Conversation, t.Thread, t.SessionID, TS(tx.Now), TS(tx.Now))
		thread, fresh = t, true
		return err
	})
	return thread, fresh, err
}

// startThreadSessionTx creates a chat thread's session running, in its first turn.
func startThreadSessionTx(ctx context.Context, tx *Tx, s *AgentSession) error {
	s.Status = SessionRunning
	now := tx.Now
	s.StartedAt = &now
	if err := CreateAgentSessionTx(ctx, tx, s); err != nil {
		return err
	}
	s.Turns = 1
	_, err := tx.ExecContext(ctx, `UPDATE agent_sessions SET turns = 1 WHERE id = ?`, s.ID)
	return err
}

// OpenChannelInvestigation claims a delivery and starts m.Session (running,
// its first turn) as the thread's session, in one transaction. A thread that
// had a session moves on to the new one: an investigation asked for in a
// conversation gets its own session (and so its evidence pack), and the
// thread's later replies continue the investigation.
func (db *DB) OpenChannelInvestigation(ctx context.Context, m *ChannelMessage) (*ChannelThread, error) {
	t := m.Thread
	err := db.Write(ctx, func(tx *Tx) error {
		if err := claimDeliveryTx(ctx, tx, t.ChannelID, m.DeliveryKey); err != nil {
			return err
		}
		if err := startThreadSessionTx(ctx, tx, m.Session); err != nil {
			return err
		}
		t.SessionID, t.LastInboundAt, t.CreatedAt = m.Session.ID, tx.Now, tx.Now
		_, err := tx.ExecContext(ctx, `INSERT INTO channel_threads (`+channelThreadCols+`) VALUES (?,?,?,?,?,?,?)
			ON CONFLICT (channel_id, thread_key) DO UPDATE SET session_id = excluded.session_id, last_inbound_at = excluded.last_inbound_at`,
			t.ChannelID, t.ThreadKey, t.Conversation, t.Thread, t.SessionID, TS(tx.Now), TS(tx.Now))
		return err
	})
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// FindChannelThreadBySession returns the chat thread a session belongs to.
func (db *DB) FindChannelThreadBySession(ctx context.Context, sessionID string) (*ChannelThread, error) {
	return scanChannelThread(db.r.QueryRowContext(ctx, `SELECT `+channelThreadCols+` FROM channel_threads WHERE session_id = ?`, sessionID))
}

// ChannelApprovalMessage is a chat message showing an approval.
type ChannelApprovalMessage struct {
	ApprovalID   string
	ChannelID    string
	Conversation string
	MessageRef   string // Slack ts, Telegram message id, WhatsApp message id
}

// AddChannelApprovalMessage records a chat message that shows an approval.
func (db *DB) AddChannelApprovalMessage(ctx context.Context, m ChannelApprovalMessage) error {
	return db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO channel_approval_messages (approval_id, channel_id, conversation, message_ref, created_at)
			VALUES (?,?,?,?,?)`, m.ApprovalID, m.ChannelID, m.Conversation, m.MessageRef, TS(tx.Now))
		return err
	})
}

// FindChannelApprovalMessages lists the chat messages showing an approval of orgID.
func (db *DB) FindChannelApprovalMessages(ctx context.Context, orgID, approvalID string) ([]ChannelApprovalMessage, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT m.approval_id, m.channel_id, m.conversation, m.message_ref
		FROM channel_approval_messages m JOIN channels c ON c.id = m.channel_id
		WHERE m.approval_id = ? AND c.org_id = ?`, approvalID, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ChannelApprovalMessage
	for rows.Next() {
		var m ChannelApprovalMessage
		if err := rows.Scan(&m.ApprovalID, &m.ChannelID, &m.Conversation, &m.MessageRef); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// PurgeChannelDeliveries forgets delivery keys older than before: platforms
// retry for minutes (Slack) to a day (WhatsApp), never for weeks.
func (db *DB) PurgeChannelDeliveries(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := db.Write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM channel_deliveries WHERE created_at < ?`, TS(before))
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return n, err
}

// LastTurnStart is the number of the latest "session" event of a session
// (the first event of its latest turn), 0 when none is stored.
func (db *DB) LastTurnStart(ctx context.Context, sessionID string) (int64, error) {
	var n int64
	err := db.r.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM session_events WHERE session_id = ? AND type = 'session'`, sessionID).Scan(&n)
	return n, err
}

// FindChannelThread returns a channel's thread by its key.
func (db *DB) FindChannelThread(ctx context.Context, channelID, threadKey string) (*ChannelThread, error) {
	return scanChannelThread(db.r.QueryRowContext(ctx, `SELECT `+channelThreadCols+` FROM channel_threads WHERE channel_id = ? AND thread_key = ?`, channelID, threadKey))
}

// NoteWithheld counts a message the bot did not send to a thread (the
// platform's window had closed).
func (db *DB) NoteWithheld(ctx context.Context, channelID, threadKey string) error {
	return db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE channel_threads SET withheld = withheld + 1 WHERE channel_id = ? AND thread_key = ?`, channelID, threadKey)
		return err
	})
}

// TakeWithheld returns how many messages were withheld from a thread and resets the count.
func (db *DB) TakeWithheld(ctx context.Context, channelID, threadKey string) (int, error) {
	var n int
	err := db.Write(ctx, func(tx *Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT withheld FROM channel_threads WHERE channel_id = ? AND thread_key = ?`, channelID, threadKey).Scan(&n)
		if errors.Is(err, sql.ErrNoRows) || n == 0 {
			n = 0
			return nil
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE channel_threads SET withheld = 0 WHERE channel_id = ? AND thread_key = ?`, channelID, threadKey)
		return err
	})
	return n, err
}

// FindCardApprovalsExpiredSince lists the approvals other than tool calls
// (whose expiry is reported one by one) shown on chat cards that expired at
// or after since, so their cards can say so.
func (db *DB) FindCardApprovalsExpiredSince(ctx context.Context, since time.Time) ([]Approval, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+approvalCols+` FROM approvals a
		WHERE a.status = 'expired' AND a.kind != 'tool_call' AND a.updated_at >= ?
		AND EXISTS (SELECT 1 FROM channel_approval_messages m WHERE m.approval_id = a.id)`, TS(since))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return collectRows(rows, scanApproval)
}
