package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// AuditCheckpoint is a signed statement of an org's audit chain head:
// Seq events, the last with HeadHash.
type AuditCheckpoint struct {
	ID        string
	OrgID     string
	Seq       int64
	HeadHash  string
	CreatedAt time.Time
	Signature string
}

// AuditHead returns the newest event's seq and hash of an org's chain
// (0 and GenesisHash when it is empty).
func (db *DB) AuditHead(ctx context.Context, orgID string) (int64, string, error) {
	var seq int64
	var hash string
	err := db.r.QueryRowContext(ctx, `SELECT seq, hash FROM audit_events WHERE org_id = ? ORDER BY seq DESC LIMIT 1`, orgID).Scan(&seq, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, GenesisHash, nil
	}
	return seq, hash, err
}

// AuditHashAt returns the hash of an org's event seq, NotFound when the
// chain has no such event.
func (db *DB) AuditHashAt(ctx context.Context, orgID string, seq int64) (string, error) {
	var hash string
	err := db.r.QueryRowContext(ctx, `SELECT hash FROM audit_events WHERE org_id = ? AND seq = ?`, orgID, seq).Scan(&hash)
	if errors.Is(err, sql.ErrNoRows) {
		return "", NotFound("audit event")
	}
	return hash, err
}

// LatestAuditCheckpoint returns the org's checkpoint of the highest seq,
// NotFound when there is none.
func (db *DB) LatestAuditCheckpoint(ctx context.Context, orgID string) (*AuditCheckpoint, error) {
	var c AuditCheckpoint
	var at string
	err := db.r.QueryRowContext(ctx, `SELECT id, org_id, seq, head_hash, created_at, signature FROM audit_checkpoints
		WHERE org_id = ? ORDER BY seq DESC, created_at DESC LIMIT 1`, orgID).Scan(&c.ID, &c.OrgID, &c.Seq, &c.HeadHash, &at, &c.Signature)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("audit checkpoint")
	}
	if err != nil {
		return nil, err
	}
	c.CreatedAt = ParseTS(at)
	return &c, nil
}

// CreateAuditCheckpoint stores a signed checkpoint (ID and CreatedAt are
// the caller's: they are part of what was signed).
func (db *DB) CreateAuditCheckpoint(ctx context.Context, c *AuditCheckpoint) error {
	return db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO audit_checkpoints (id, org_id, seq, head_hash, created_at, signature)
			VALUES (?,?,?,?,?,?)`, c.ID, c.OrgID, c.Seq, c.HeadHash, TS(c.CreatedAt), c.Signature)
		return err
	})
}
