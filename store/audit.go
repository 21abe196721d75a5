package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// AuditRecord is one stored audit event. Seq numbers the events of one org
// from 1; Hash chains each event to the previous one of its org.
type AuditRecord struct {
	ID          string
	OrgID       string
	Seq         int64
	ProjectID   string
	ActorUserID string
	ActorKeyID  string
	Action      string
	Outcome     string
	TargetType  string
	TargetID    string
	IP          string
	UserAgent   string
	Detail      string // JSON object
	CreatedAt   time.Time
	PrevHash    string
	Hash        string
}

// GenesisHash is the prev_hash of an org's first event.
const GenesisHash = "0000000000000000000000000000000000000000000000000000000000000000"

// AuditHash is sha256 over the canonical encoding of every field but Hash:
// a JSON array in a fixed order, so any change to a stored field, the order
// or a deletion inside the chain shows.
func AuditHash(e *AuditRecord) string {
	b, _ := json.Marshal([]any{e.ID, e.OrgID, e.Seq, e.ProjectID, e.ActorUserID, e.ActorKeyID, e.Action, e.Outcome,
		e.TargetType, e.TargetID, e.IP, e.UserAgent, e.Detail, TS(e.CreatedAt), e.PrevHash})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// AppendAudit appends events in one transaction, chaining each to the last
// event of its org. Events keep their CreatedAt (the time of the request).
func (db *DB) AppendAudit(ctx context.Context, events []*AuditRecord) error {
	unlock, err := db.lockAuditChains(ctx, events)
	if err != nil {
		return err
	}
	defer unlock()
	return db.Write(ctx, func(tx *Tx) error {
		type head struct {
			seq  int64
			hash string
		}
		heads := map[string]*head{}
		for _, e := range events {
			h := heads[e.OrgID]
			if h == nil {
				h = &head{hash: GenesisHash}
				err := tx.QueryRowContext(ctx, `SELECT seq, hash FROM audit_events WHERE org_id = ? ORDER BY seq DESC LIMIT 1`, e.OrgID).Scan(&h.seq, &h.hash)
				if errors.Is(err, sql.ErrNoRows) {
					// Every stored event may have been archived: the chain goes on from the anchor.
					a, aerr := getAuditAnchor(ctx, tx, e.OrgID)
					if aerr != nil {
						return aerr
					}
					if a != nil {
						h.seq, h.hash = a.Seq, a.Hash
					}
				} else if err != nil {
					return err
				}
				heads[e.OrgID] = h
			}
			if e.ID == "" {
				e.ID = NewID()
			}
			if e.Detail == "" {
				e.Detail = "{}"
			}
			if e.CreatedAt.IsZero() {
				e.CreatedAt = tx.Now
			}
			e.Seq, e.PrevHash = h.seq+1, h.hash
			e.Hash = AuditHash(e)
			_, err := tx.ExecContext(ctx, `INSERT INTO audit_events (id, org_id, seq, project_id, actor_user_id, actor_key_id, action, outcome,
				target_type, target_id, ip, user_agent, detail, created_at, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				e.ID, e.OrgID, e.Seq, e.ProjectID, e.ActorUserID, e.ActorKeyID, e.Action, e.Outcome, e.TargetType, e.TargetID,
				e.IP, e.UserAgent, e.Detail, TS(e.CreatedAt), e.PrevHash, e.Hash)
			if err != nil {
				return err
			}
			h.seq, h.hash = e.Seq, e.Hash
		}
		return nil
	})
}

// AuditFilter narrows an org's audit log. Zero values mean no filter.
type AuditFilter struct {
	OrgID      string
	Actor      string // user id or key id
	Action     string // exact, or a prefix when it ends in '*'
	TargetType string
	TargetID   string
	Outcome    string
	From, To   time.Time
	Limit      int
	Offset     int
}

func (f AuditFilter) where() (string, []any) {
	w := []string{`org_id = ?`}
	args := []any{f.OrgID}
	add := func(cond string, v any) { w = append(w, cond); args = append(args, v) }
	if f.Actor != "" {
		w = append(w, `(actor_user_id = ? OR actor_key_id = ?)`)
		args = append(args, f.Actor, f.Actor)
	}
	if p, ok := strings.CutSuffix(f.Action, "*"); ok {
		add(`action LIKE ? ESCAPE '\'`, likeEscape(p)+"%")
	} else if f.Action != "" {
		add(`action = ?`, f.Action)
	}
	if f.TargetType != "" {
		add(`target_type = ?`, f.TargetType)
	}
	if f.TargetID != "" {
		add(`target_id = ?`, f.TargetID)
	}
	if f.Outcome != "" {
		add(`outcome = ?`, f.Outcome)
	}
	if !f.From.IsZero() {
		add(`created_at >= ?`, TS(f.From))
	}
	if !f.To.IsZero() {
		add(`created_at < ?`, TS(f.To))
	}
	return ` WHERE ` + strings.Join(w, ` AND `), args
}

const auditCols = `id, org_id, seq, project_id, actor_user_id, actor_key_id, action, outcome, target_type, target_id, ip, user_agent, detail, created_at, prev_hash, hash`

func scanAudit(row interface{ Scan(...any) error }) (*AuditRecord, error) {
	var e AuditRecord
	var created string
	err := row.Scan(&e.ID, &e.OrgID, &e.Seq, &e.ProjectID, &e.ActorUserID, &e.ActorKeyID, &e.Action, &e.Outcome, &e.TargetType, &e.TargetID,
		&e.IP, &e.UserAgent, &e.Detail, &created, &e.PrevHash, &e.Hash)
	e.CreatedAt = ParseTS(created)
	return &e, err
}

// FindAuditEvents returns one page of an org's events, newest first, and the total.
func (db *DB) FindAuditEvents(ctx context.Context, f AuditFilter) ([]*AuditRecord, int, error) {
	where, args := f.where()
	var total int
	if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM audit_events`+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+auditCols+` FROM audit_events`+where+` ORDER BY seq DESC LIMIT ? OFFSET ?`, append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out, err := collectPtrs(rows, scanAudit)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// EachAuditEvent streams the matching events oldest first (Limit and Offset ignored).
func (db *DB) EachAuditEvent(ctx context.Context, f AuditFilter, fn func(*AuditRecord) error) error {
	where, args := f.where()
	rows, err := db.r.QueryContext(ctx, `SELECT `+auditCols+` FROM audit_events`+where+` ORDER BY seq`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return rows.Err()
}

// AuditBreak is the first event whose link does not hold.
type AuditBreak struct {
	ID     string
	Seq    int64
	Reason string // hash_mismatch, prev_hash_mismatch, sequence_gap
}

// VerifyAuditChain recomputes an org's chain from the first event (or from
// the anchor retention left, store/audit_archive.go) and returns how many
// events it checked and the first broken link, if any.
func (db *DB) VerifyAuditChain(ctx context.Context, orgID string) (int, *AuditBreak, error) {
	n := 0
	prev, want := GenesisHash, int64(1)
	anchor, err := db.GetAuditAnchor(ctx, orgID)
	if err != nil {
		return 0, nil, err
	}
	if anchor != nil {
		prev, want = anchor.Hash, anchor.Seq+1
	}
	var brk *AuditBreak
	stop := errors.New("stop")
	err = db.EachAuditEvent(ctx, AuditFilter{OrgID: orgID}, func(e *AuditRecord) error {
		n++
		switch {
		case e.Seq != want:
			brk = &AuditBreak{ID: e.ID, Seq: e.Seq, Reason: "sequence_gap"}
		case e.PrevHash != prev:
			brk = &AuditBreak{ID: e.ID, Seq: e.Seq, Reason: "prev_hash_mismatch"}
		case AuditHash(e) != e.Hash:
			brk = &AuditBreak{ID: e.ID, Seq: e.Seq, Reason: "hash_mismatch"}
		}
		if brk != nil {
			return stop
		}
		prev, want = e.Hash, want+1
		return nil
	})
	if errors.Is(err, stop) {
		err = nil
	}
	return n, brk, err
}
