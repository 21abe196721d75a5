package store

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"
	"time"
)

// RefreshAttempt is one presented refresh token. The token secrets stay
// with the caller: Token derives a generation's token and Hash digests one.
type RefreshAttempt struct {
	SessionID string
	Presented []byte // Hash of the presented token
	IP, UA    string
	// Grace is how long the previous token still gets the current one
	// (concurrent tabs refreshing at once).
	Grace time.Duration
	Token func(s *AuthSession, generation int) string
	Hash  func(token string) []byte
	// Older recognises a token of an earlier generation of s: reuse of a
	// stolen token, which revokes the session.
	Older func(s *AuthSession) bool
}

// RefreshOutcome says which row of the refresh state table applied.
type RefreshOutcome int

const (
	RefreshInvalid RefreshOutcome = iota // unknown session or token: nothing changed
	RefreshEnded                         // session revoked or expired, or its user gone
	RefreshRotated                       // the current token: the session moved to the next one
	RefreshGrace                         // the previous token within Grace: the current one again
	RefreshReused                        // an older token: the session is now revoked
	RefreshNoOrg                         // the user belongs to no organization: nothing changed
)

// RefreshResult is the outcome of one attempt; for Rotated and Grace,
// Refresh is the token to hand out and UserID/OrgID/Now what the access
// token is issued for.
type RefreshResult struct {
	Outcome RefreshOutcome
	Refresh string
	UserID  string
	OrgID   string
	Now     time.Time
}

const (
	queryRefreshSession = `SELECT ` + authSessionCols + ` FROM auth_sessions WHERE id = ?`
	queryRefreshUser    = `SELECT current_org_id, EXISTS (SELECT 1 FROM org_members m WHERE m.org_id = u.current_org_id AND m.user_id = u.id)
	FROM users u WHERE u.id = ? AND u.deleted_at IS NULL`
	queryOldestOrg = `SELECT org_id FROM org_members WHERE user_id = ? ORDER BY created_at LIMIT 1`
	execRotate     = `UPDATE auth_sessions SET generation = ?, refresh_hash = ?, prev_refresh_hash = ?,
	rotated_at = ?, last_used_at = ?, ip = ?, user_agent = ? WHERE id = ? AND revoked_at IS NULL`
	execRevokeReuse = `UPDATE auth_sessions SET revoked_at = COALESCE(revoked_at, ?),
	revoke_reason = CASE WHEN revoked_at IS NULL THEN 'refresh_reuse' ELSE revoke_reason END WHERE id = ?`
	execCurrentOrg = `UPDATE users SET current_org_id = ? WHERE id = ?`
)

var refreshStmts = []string{queryRefreshSession, queryRefreshUser, queryOldestOrg, execRotate, execRevokeReuse, execCurrentOrg}

// maxRefreshBatch bounds the rotations of one transaction.
const maxRefreshBatch = 256

// RefreshAuthSession applies the refresh state table to one presented
// token, in a transaction the store owns. Concurrent attempts share one
// fsync'd commit (group commit); each returns only after the commit that
// holds its rotation. Attempts on the same session inside one batch are
// applied in arrival order, each seeing the previous one's rotation, exactly
// as if they had committed one by one.
func (db *DB) RefreshAuthSession(ctx context.Context, a RefreshAttempt) (RefreshResult, error) {
	db.refreshInit.Do(func() {
		db.refreshGC = &groupCommit[RefreshAttempt, RefreshResult]{max: maxRefreshBatch, run: db.refreshBatch}
	})
	if _, err := db.writerStmts(ctx, refreshStmts...); err != nil {
		return RefreshResult{}, err
	}
	return db.refreshGC.do(ctx, db, a)
}

func (db *DB) refreshBatch(ctx context.Context, tx *Tx, reqs []RefreshAttempt, res []RefreshResult) error {
	// refreshStmts were prepared on the writer (RefreshAuthSession): st
	// finds them there as it runs them.
	st := newTxStmts(tx)
	var err error
	for i := range reqs {
		if res[i], err = refreshOneTx(ctx, tx, st, &reqs[i]); err != nil {
			return err
		}
	}
	return nil
}

func refreshOneTx(ctx context.Context, tx *Tx, st *txStmts, a *RefreshAttempt) (RefreshResult, error) {
	out := RefreshResult{Now: tx.Now}
	sess, err := scanAuthSession(st.queryRow(ctx, queryRefreshSession, a.SessionID))
	if errors.Is(err, sql.ErrNoRows) {
		return out, nil // RefreshInvalid
	}
	if err != nil {
		return out, err
	}
	if sess.RevokedAt != nil || !sess.ExpiresAt.After(tx.Now) {
		out.Outcome = RefreshEnded
		return out, nil
	}
	var current sql.NullString
	var member bool
	err = st.queryRow(ctx, queryRefreshUser, sess.UserID).Scan(&current, &member)
	if errors.Is(err, sql.ErrNoRows) {
		out.Outcome = RefreshEnded
		return out, nil
	}
	if err != nil {
		return out, err
	}
	out.UserID = sess.UserID
	gen := sess.Generation
	rotate := false
	switch {
	case subtle.ConstantTimeCompare(a.Presented, sess.RefreshHash) == 1:
		gen++
		rotate = true
		out.Outcome = RefreshRotated
	case sess.PrevRefreshHash != nil && subtle.ConstantTimeCompare(a.Presented, sess.PrevRefreshHash) == 1 &&
		sess.RotatedAt != nil && tx.Now.Sub(*sess.RotatedAt) <= a.Grace:
		out.Outcome = RefreshGrace
	default:
		if a.Older(sess) {
			out.Outcome = RefreshReused
			_, err := st.exec(ctx, execRevokeReuse, TS(tx.Now), sess.ID)
			return out, err
		}
		return out, nil // RefreshInvalid
	}
	// The org the access token acts in: the current one while still a
	// member, else the oldest membership (which becomes current). Without
	// any, nothing is written (the rotation would strand the client).
	if current.Valid && current.String != "" && member {
		out.OrgID = current.String
	} else {
		err := st.queryRow(ctx, queryOldestOrg, sess.UserID).Scan(&out.OrgID)
		if errors.Is(err, sql.ErrNoRows) {
			return RefreshResult{Outcome: RefreshNoOrg, Now: tx.Now}, nil
		}
		if err != nil {
			return out, err
		}
		if _, err := st.exec(ctx, execCurrentOrg, out.OrgID, sess.UserID); err != nil {
			return out, err
		}
	}
	out.Refresh = a.Token(sess, gen)
	if rotate {
		if _, err := st.exec(ctx, execRotate, gen, a.Hash(out.Refresh), sess.RefreshHash, TS(tx.Now), TS(tx.Now), a.IP, a.UA, sess.ID); err != nil {
			return out, err
		}
	}
	return out, nil
}
