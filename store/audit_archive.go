package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Audit retention moves the oldest events of an org into an archive
// segment and records an anchor, so the chain still verifies: from the
// anchor's hash through every stored event, and each segment on its own
// from its first prev_hash to the anchor it produced.

// AuditAnchor is where an org's stored chain starts.
type AuditAnchor struct {
	OrgID      string
	Seq        int64  // the last archived event
	Hash       string // its hash: prev_hash of the first stored event
	Segment    string // the archive file holding it
	ArchivedAt time.Time
}

// GetAuditAnchor returns the org's anchor, nil when nothing was archived.
func (db *DB) GetAuditAnchor(ctx context.Context, orgID string) (*AuditAnchor, error) {
	return getAuditAnchor(ctx, db.r, orgID)
}

func getAuditAnchor(ctx context.Context, q Querier, orgID string) (*AuditAnchor, error) {
	a := &AuditAnchor{OrgID: orgID}
	var at string
	err := q.QueryRowContext(ctx, `SELECT seq, hash, segment, archived_at FROM audit_anchors WHERE org_id = ?`, orgID).Scan(&a.Seq, &a.Hash, &a.Segment, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	a.ArchivedAt = ParseTS(at)
	return a, nil
}

// OldestAuditBefore returns the org's oldest stored events, in chain order,
// up to limit and stopping at the first one created at or after cutoff: an
// archive is always a prefix of the stored chain.
func (db *DB) OldestAuditBefore(ctx context.Context, orgID string, cutoff time.Time, limit int) ([]*AuditRecord, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+auditCols+` FROM audit_events WHERE org_id = ? ORDER BY seq LIMIT ?`, orgID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*AuditRecord
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return nil, err
		}
		if !e.CreatedAt.Before(cutoff) {
			break
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// ArchiveAuditPrefix deletes the org's stored events up to and including
// last and moves the anchor to it, in one transaction. The caller has
// already written them to segment (durably). It refuses when the stored
// chain no longer starts where first says (another run got there first).
func (db *DB) ArchiveAuditPrefix(ctx context.Context, orgID string, first, last *AuditRecord, segment string) error {
	return db.Write(ctx, func(tx *Tx) error {
		var minSeq sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT min(seq) FROM audit_events WHERE org_id = ?`, orgID).Scan(&minSeq); err != nil {
			return err
		}
		if !minSeq.Valid || minSeq.Int64 != first.Seq {
			return fmt.Errorf("audit archive: the stored chain of %s starts at %d, not %d", orgID, minSeq.Int64, first.Seq)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM audit_events WHERE org_id = ? AND seq <= ?`, orgID, last.Seq); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO audit_anchors (org_id, seq, hash, segment, archived_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT(org_id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, segment = excluded.segment, archived_at = excluded.archived_at`,
			orgID, last.Seq, last.Hash, segment, TS(tx.Now))
		return err
	})
}
