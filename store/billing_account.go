package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Billing statuses of an org. past_due becomes read-only after the grace
// period (computed, not stored: nothing has to run for it to happen).
const (
	BillingActive   = "active"
	BillingTrialing = "trialing"
	BillingPastDue  = "past_due"
	BillingCanceled = "canceled"
)

// BillingAccount is an org's plan and payment state. An org without a row
// reads as the default plan, active.
type BillingAccount struct {
	OrgID                string
	PlanID               string // "" : the default plan
	Status               string
	PastDueSince         *time.Time
	PendingPlanID        string
	PendingReason        string
	StripeCustomerID     string
	StripeSubscriptionID string
	StripePriceID        string
	UpdatedAt            time.Time
}

const billingAccountCols = `org_id, plan_id, status, past_due_since, pending_plan_id, pending_reason,
	stripe_customer_id, stripe_subscription_id, stripe_price_id, updated_at`

func scanBillingAccount(row interface{ Scan(...any) error }, orgID string) (*BillingAccount, error) {
	a := &BillingAccount{OrgID: orgID, Status: BillingActive}
	var pastDue, pending, cust, sub, price sql.NullString
	var updated string
	err := row.Scan(&a.OrgID, &a.PlanID, &a.Status, &pastDue, &pending, &a.PendingReason, &cust, &sub, &price, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return a, nil
	}
	if err != nil {
		return nil, err
	}
	a.PastDueSince = scanNullTS(pastDue)
	a.PendingPlanID, a.StripeCustomerID, a.StripeSubscriptionID, a.StripePriceID = pending.String, cust.String, sub.String, price.String
	a.UpdatedAt = ParseTS(updated)
	return a, nil
}

const queryBillingAccount = `SELECT ` + billingAccountCols + ` FROM billing_accounts WHERE org_id = ?`

// FindBillingAccount returns org's billing state (defaults when none stored).
func (db *DB) FindBillingAccount(ctx context.Context, orgID string) (*BillingAccount, error) {
	return scanBillingAccount(db.readRow(ctx, queryBillingAccount, orgID), orgID)
}

// FindBillingAccountCached is FindBillingAccount answered from the write
// transactions' cache (BillingAccountTx) when it holds org, where that
// cache is kept: a run's plan caps (AgentCaps) are read once per task run,
// a reader query per webhook delivery that dispatches one. The cache is
// never staler than a read: an update drops the entry before it commits and
// only later write transactions fill it.
func (db *DB) FindBillingAccountCached(ctx context.Context, orgID string) (*BillingAccount, error) {
	if db.accountCacheShared() {
		if v, ok := db.accounts.Load(orgID); ok {
			a := v.(BillingAccount)
			return &a, nil
		}
	}
	return db.FindBillingAccount(ctx, orgID)
}

// BillingAccountTx reads org's billing state inside a write transaction:
// the quota gate's view, serialized with the create it guards.
//
// It is cached across transactions: write transactions run one at a time
// on the one writer connection, the cache is filled only inside them, and
// UpdateBillingAccount (the only writer of accounts) drops the org's entry
// inside its own transaction, so no later transaction can read a stale one.
// This spares the quota gate a query on every create.
func BillingAccountTx(ctx context.Context, tx *Tx, orgID string) (*BillingAccount, error) {
	if a, ok := tx.accounts[orgID]; ok {
		return &a, nil
	}
	if tx.db != nil && !tx.updating && tx.db.accountCacheShared() {
		if v, ok := tx.db.accounts.Load(orgID); ok {
			a := v.(BillingAccount)
			return &a, nil
		}
	}
	a, err := scanBillingAccount(tx.queryRowFast(ctx, queryBillingAccount, orgID), orgID)
	if err == nil {
		tx.cacheAccount(a)
		if tx.db != nil && !tx.updating && tx.db.accountCacheShared() {
			tx.db.accounts.Store(orgID, *a)
		}
	}
	return a, err
}

func (tx *Tx) cacheAccount(a *BillingAccount) {
	if tx.accounts == nil {
		tx.accounts = map[string]BillingAccount{}
	}
	tx.accounts[a.OrgID] = *a
}

// FindBillingAccountByCustomer finds the org of a Stripe customer.
func (db *DB) FindBillingAccountByCustomer(ctx context.Context, customerID string) (*BillingAccount, error) {
	a, err := scanBillingAccount(db.r.QueryRowContext(ctx, `SELECT `+billingAccountCols+` FROM billing_accounts
		WHERE stripe_customer_id = ?`, customerID), "")
	if err == nil && a.OrgID == "" {
		return nil, NotFound("billing account")
	}
	return a, err
}

// FindBillingAccounts lists every stored account (the Stripe usage report job).
func (db *DB) FindBillingAccounts(ctx context.Context) ([]*BillingAccount, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+billingAccountCols+` FROM billing_accounts ORDER BY org_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return collectPtrs(rows, func(r rowScanner) (*BillingAccount, error) { return scanBillingAccount(r, "") })
}

// UpdateBillingAccount reads org's account inside one write transaction,
// lets fn change it (fn may return an error to write nothing), and stores
// it. fn runs with the transaction so it can check current use.
func (db *DB) UpdateBillingAccount(ctx context.Context, orgID string, fn func(tx *Tx, a *BillingAccount) error) (*BillingAccount, error) {
	var out *BillingAccount
	err := db.Write(ctx, func(tx *Tx) error {
		tx.updating = true
		db.accounts.Delete(orgID)
		a, err := BillingAccountTx(ctx, tx, orgID)
		if err != nil {
			return err
		}
		if err := fn(tx, a); err != nil {
			return err
		}
		a.UpdatedAt = tx.Now
		_, err = tx.ExecContext(ctx, `INSERT INTO billing_accounts (`+billingAccountCols+`) VALUES (?,?,?,?,?,?,?,?,?,?)
			ON CONFLICT (org_id) DO UPDATE SET plan_id = excluded.plan_id, status = excluded.status,
			past_due_since = excluded.past_due_since, pending_plan_id = excluded.pending_plan_id,
			pending_reason = excluded.pending_reason, stripe_customer_id = excluded.stripe_customer_id,
			stripe_subscription_id = excluded.stripe_subscription_id, stripe_price_id = excluded.stripe_price_id,
			updated_at = excluded.updated_at`,
			orgID, a.PlanID, a.Status, nullTS(a.PastDueSince), nullStr(a.PendingPlanID), a.PendingReason,
			nullStr(a.StripeCustomerID), nullStr(a.StripeSubscriptionID), nullStr(a.StripePriceID), TS(a.UpdatedAt))
		tx.cacheAccount(a)
		out = a
		return err
	})
	return out, err
}

// MarkStripeEvent records a Stripe event id in tx; seen is true when it was
// recorded before (a retried delivery, to be acknowledged and ignored).
func MarkStripeEvent(ctx context.Context, tx *Tx, id, typ, orgID string) (seen bool, err error) {
	res, err := tx.ExecContext(ctx, `INSERT INTO billing_stripe_events (id, type, org_id, received_at) VALUES (?,?,?,?)
		ON CONFLICT (id) DO NOTHING`, id, typ, nullStr(orgID), TS(tx.Now))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 0, err
}

// StripeReported is the quantity of meter already reported to Stripe for
// org's period (0 when nothing yet).
func (db *DB) StripeReported(ctx context.Context, orgID, period, meter string) (float64, error) {
	var v float64
	err := db.r.QueryRowContext(ctx, `SELECT reported FROM billing_stripe_reports WHERE org_id = ? AND period = ? AND meter = ?`,
		orgID, period, meter).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return v, err
}

// SetStripeReported records what Stripe acknowledged for org's period.
func (db *DB) SetStripeReported(ctx context.Context, orgID, period, meter string, v float64) error {
	return db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO billing_stripe_reports (org_id, period, meter, reported, reported_at)
			VALUES (?,?,?,?,?) ON CONFLICT (org_id, period, meter) DO UPDATE SET reported = excluded.reported,
			reported_at = excluded.reported_at`, orgID, period, meter, v, TS(tx.Now))
		return err
	})
}

// CountPastDue counts the orgs whose payment is past due: while it is 0,
// no org can be read-only and writes skip the per-request account read.
func (db *DB) CountPastDue(ctx context.Context) (int64, error) {
	var n int64
	err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM billing_accounts WHERE status = ?`, BillingPastDue).Scan(&n)
	return n, err
}
