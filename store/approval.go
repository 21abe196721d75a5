package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Approval kinds and statuses.
const (
	ApprovalWebhookEvent = "webhook_event"
	ApprovalToolCall     = "tool_call"

	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalDenied   = "denied"
	ApprovalExpired  = "expired"
)

// Approval is something that waits for a person: a routed webhook event
// now, an agent's tool call later. Subject is what will run (JSON); the
// decision is single-use.
type Approval struct {
	ID        string
	OrgID     string
	ProjectID string
	Kind      string
	SessionID string
	Subject   string
	Title     string
	Reason    string
	RuleID    string
	EventID   string
	Status    string
	ExpiresAt time.Time
	DecidedBy string
	DecidedAt *time.Time
	Comment   string
	Result    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

const approvalCols = `id, org_id, project_id, kind, session_id, subject, title, reason, rule_id, event_id, status,
	expires_at, decided_by, decided_at, comment, result, created_at, updated_at`

func scanApproval(row interface{ Scan(...any) error }) (*Approval, error) {
	var a Approval
	var session, rule, event, decidedBy, decidedAt sql.NullString
	var expires, created, updated string
	err := row.Scan(&a.ID, &a.OrgID, &a.ProjectID, &a.Kind, &session, &a.Subject, &a.Title, &a.Reason, &rule, &event,
		&a.Status, &expires, &decidedBy, &decidedAt, &a.Comment, &a.Result, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("approval")
	}
	if err != nil {
		return nil, err
	}
	a.SessionID, a.RuleID, a.EventID, a.DecidedBy = session.String, rule.String, event.String, decidedBy.String
	a.DecidedAt, a.ExpiresAt = scanNullTS(decidedAt), ParseTS(expires)
	a.CreatedAt, a.UpdatedAt = ParseTS(created), ParseTS(updated)
	return &a, nil
}

// createApprovalTx opens an approval inside a caller's transaction.
func createApprovalTx(ctx context.Context, tx *Tx, a *Approval) error {
	if a.ID == "" {
		a.ID = NewID()
	}
	a.Status, a.CreatedAt, a.UpdatedAt = ApprovalPending, tx.Now, tx.Now
	_, err := tx.ExecContext(ctx, `INSERT INTO approvals (`+approvalCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		a.ID, a.OrgID, a.ProjectID, a.Kind, nullStr(a.SessionID), orJSON(a.Subject, "{}"), a.Title, a.Reason,
		nullStr(a.RuleID), nullStr(a.EventID), a.Status, TS(a.ExpiresAt), nil, nil, "", "{}", TS(a.CreatedAt), TS(a.UpdatedAt))
	return err
}

// CreateApproval opens an approval in its own transaction (tool calls).
func (db *DB) CreateApproval(ctx context.Context, a *Approval) error {
	return db.Write(ctx, func(tx *Tx) error { return createApprovalTx(ctx, tx, a) })
}

// FindApproval returns one approval of a project. A pending approval past
// its expiry reads as expired.
func (db *DB) FindApproval(ctx context.Context, orgID, projectID, id string) (*Approval, error) {
	a, err := scanApproval(db.r.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = ? AND org_id = ? AND project_id = ?`,
		id, orgID, projectID))
	if err == nil {
		a.expire(db.Now())
	}
	return a, err
}

func (a *Approval) expire(now time.Time) {
	if a.Status == ApprovalPending && !now.Before(a.ExpiresAt) {
		a.Status = ApprovalExpired
	}
}

// ApprovalFilter selects approvals of a project.
type ApprovalFilter struct {
	OrgID, ProjectID string
	Status, Kind     string
	SessionID        string
	Limit, Offset    int
}

// FindApprovals lists approvals, pending (unexpired) first, then newest
// first, and the total.
func (db *DB) FindApprovals(ctx context.Context, f ApprovalFilter) ([]Approval, int, error) {
	nowT := db.Now()
	now := TS(nowT)
	q := scopedList(f.OrgID, f.ProjectID)
	switch f.Status {
	case "":
	case ApprovalPending:
		q.and("status = 'pending' AND expires_at > ?", now)
	case ApprovalExpired:
		q.and("(status = 'expired' OR (status = 'pending' AND expires_at <= ?))", now)
	default:
		q.and("status = ?", f.Status)
	}
	q.eq("kind", f.Kind).eq("session_id", f.SessionID)
	out, total, err := listPage(ctx, db, "approvals", approvalCols, q,
		"(status = 'pending' AND expires_at > ?) DESC, created_at DESC, id DESC", []any{now}, f.Limit, f.Offset, scanApproval)
	for i := range out {
		out[i].expire(nowT)
	}
	return out, total, err
}

// ApproveFunc carries out an approved approval of a kind whose effect lies
// outside the store (tool_call: the server's policy has the last word). It
// runs inside the decision's transaction, so a refusal undoes the decision,
// and returns the result to record (JSON).
type ApproveFunc func(ctx context.Context, a *Approval) (result string, err error)

// DecideApproval records a decision (approved or denied) once. Deciding an
// expired or already decided approval is a conflict; another project's
// approval is not found. Approving a webhook_event dispatches the event to
// the approved task in the same transaction (exactly once per approval);
// approving any other kind runs run (when not nil) there.
func (db *DB) DecideApproval(ctx context.Context, orgID, projectID, id, decision, userID, comment string, run ApproveFunc) (*Approval, error) {
	return db.decideApproval(ctx, orgID, projectID, id, decision, userID, comment, nil, run)
}

// ApproveRemembering approves like DecideApproval and, in the same
// transaction, adds the rule remember builds from the approval (the caller
// refuses approvals it cannot turn into a rule by returning an error). It
// returns the approval and the rule.
func (db *DB) ApproveRemembering(ctx context.Context, orgID, projectID, id, userID, comment string,
	remember func(a *Approval) (*Rule, error), run ApproveFunc) (*Approval, *Rule, error) {
	var rule *Rule
	a, err := db.decideApproval(ctx, orgID, projectID, id, ApprovalApproved, userID, comment, func(tx *Tx, a *Approval) error {
		var err error
		if rule, err = remember(a); err != nil {
			return err
		}
		return createRuleTx(ctx, tx, rule)
	}, run)
	return a, rule, err
}

func (db *DB) decideApproval(ctx context.Context, orgID, projectID, id, decision, userID, comment string,
	before func(tx *Tx, a *Approval) error, run ApproveFunc) (*Approval, error) {
	var out *Approval
	err := db.Write(ctx, func(tx *Tx) error {
		a, err := scanApproval(tx.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = ? AND org_id = ? AND project_id = ?`,
			id, orgID, projectID))
		if err != nil {
			return err
		}
		a.expire(tx.Now)
		if a.Status != ApprovalPending {
			return &Error{Code: EConflict, Message: "approval is already " + a.Status, Reason: "approval_" + a.Status}
		}
		a.Status, a.DecidedBy, a.Comment, a.UpdatedAt = decision, userID, comment, tx.Now
		now := tx.Now
		a.DecidedAt = &now
		if decision == ApprovalApproved {
			if before != nil {
				if err := before(tx, a); err != nil {
					return err
				}
			}
			switch {
			case a.Kind == ApprovalWebhookEvent:
				a.Result, err = approveWebhookEventTx(ctx, tx, a)
			case run != nil:
				a.Result, err = run(ctx, a)
			}
			if err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `UPDATE approvals SET status = ?, decided_by = ?, decided_at = ?, comment = ?, result = ?,
			updated_at = ? WHERE id = ? AND status = 'pending'`, a.Status, nullStr(userID), TS(now), comment, orJSON(a.Result, "{}"),
			TS(now), a.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return &Error{Code: EConflict, Message: "approval was decided meanwhile", Reason: "approval_decided"}
		}
		out = a
		return nil
	})
	return out, err
}

// ExpireApprovals marks pending approvals past their expiry as expired.
func (db *DB) ExpireApprovals(ctx context.Context) (int, error) {
	var n int64
	err := db.Write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE approvals SET status = 'expired', updated_at = ? WHERE status = 'pending' AND expires_at <= ?`,
			TS(tx.Now), TS(tx.Now))
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return int(n), err
}
