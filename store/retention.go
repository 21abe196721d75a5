package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// RetentionPolicy is an org's retention in days; nil takes the server
// default, 0 keeps forever.
type RetentionPolicy struct {
	OrgID           string
	TranscriptsDays *int
	SessionsDays    *int
	AuditDays       *int
	UpdatedAt       time.Time
}

// GetRetention returns the org's policy (all nil when none was set).
func (db *DB) GetRetention(ctx context.Context, orgID string) (*RetentionPolicy, error) {
	p := &RetentionPolicy{OrgID: orgID}
	var tr, se, au sql.NullInt64
	var updated sql.NullString
	err := db.r.QueryRowContext(ctx, `SELECT transcripts_days, sessions_days, audit_days, updated_at FROM retention_policies WHERE org_id = ?`, orgID).
		Scan(&tr, &se, &au, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	p.TranscriptsDays, p.SessionsDays, p.AuditDays = nullInt(tr), nullInt(se), nullInt(au)
	p.UpdatedAt = ParseTS(updated.String)
	return p, nil
}

// PutRetention replaces the org's policy.
func (db *DB) PutRetention(ctx context.Context, p *RetentionPolicy) error {
	return db.Write(ctx, func(tx *Tx) error {
		p.UpdatedAt = tx.Now
		_, err := tx.ExecContext(ctx, `INSERT INTO retention_policies (org_id, transcripts_days, sessions_days, audit_days, updated_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT(org_id) DO UPDATE SET transcripts_days = excluded.transcripts_days,
			sessions_days = excluded.sessions_days, audit_days = excluded.audit_days, updated_at = excluded.updated_at`,
			p.OrgID, intOrNull(p.TranscriptsDays), intOrNull(p.SessionsDays), intOrNull(p.AuditDays), TS(tx.Now))
		return err
	})
}

// OrgIDs lists every organization id (the retention job walks them).
func (db *DB) OrgIDs(ctx context.Context) ([]string, error) {
	return queryStrings(ctx, db.r, `SELECT id FROM organizations ORDER BY id`)
}

// terminalSessions: a session in one of these states is over and may expire.
const terminalSessions = `('completed', 'failed', 'cancelled', 'timeout')`

// PurgeTranscripts deletes, in one transaction, the transcripts and events
// of at most limit of the org's sessions that ended before cutoff; the
// session rows (status, cost, timing) stay. It returns how many sessions
// lost their transcript.
func (db *DB) PurgeTranscripts(ctx context.Context, orgID string, cutoff time.Time, limit int) (int, error) {
	var n int
	err := db.Write(ctx, func(tx *Tx) error {
		ids, err := queryStrings(ctx, tx, `SELECT s.id FROM agent_sessions s WHERE s.org_id = ? AND s.ended_at IS NOT NULL AND s.ended_at < ?
			AND s.status IN `+terminalSessions+`
			AND (EXISTS (SELECT 1 FROM session_transcripts t WHERE t.session_id = s.id) OR EXISTS (SELECT 1 FROM session_events e WHERE e.session_id = s.id))
			LIMIT ?`, orgID, TS(cutoff), limit)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `DELETE FROM session_transcripts WHERE session_id = ?`, id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM session_events WHERE session_id = ?`, id); err != nil {
				return err
			}
		}
		n = len(ids)
		return nil
	})
	return n, err
}

// PurgeSessions deletes at most limit of the org's sessions that ended
// before cutoff, with everything that hangs off them (transcript, events,
// task run), in one transaction.
func (db *DB) PurgeSessions(ctx context.Context, orgID string, cutoff time.Time, limit int) (int, error) {
	var n int64
	err := db.Write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM agent_sessions WHERE id IN (SELECT id FROM agent_sessions
			WHERE org_id = ? AND ended_at IS NOT NULL AND ended_at < ? AND status IN `+terminalSessions+` LIMIT ?)`,
			orgID, TS(cutoff), limit)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// IncrementalVacuum returns up to pages free pages to the file system. It
// does nothing on a database created before auto_vacuum was incremental
// (deploy/README.md says how to convert one).
func (db *DB) IncrementalVacuum(ctx context.Context, pages int) error {
	_, err := db.w.ExecContext(ctx, fmt.Sprintf(`PRAGMA incremental_vacuum(%d)`, pages))
	return err
}

func nullInt(v sql.NullInt64) *int {
	if !v.Valid {
		return nil
	}
	i := int(v.Int64)
	return &i
}

func intOrNull(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
