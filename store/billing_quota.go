package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// QuotaKind names one limit of a billing plan.
type QuotaKind string

// The quotas a plan can set. The counted ones (members ... channels) are
// checked inside the transaction that creates the thing; the monthly ones
// are rate-like (429 until the next month).
const (
	QuotaMembers        QuotaKind = "members"
	QuotaProjects       QuotaKind = "projects"
	QuotaEnabledTasks   QuotaKind = "enabled_tasks"
	QuotaConnectors     QuotaKind = "connectors"
	QuotaChannels       QuotaKind = "channels"
	QuotaKnowledgeBytes QuotaKind = "knowledge_bytes"
	QuotaWebhookEvents  QuotaKind = "webhook_events_per_month"
	QuotaAgentRuns      QuotaKind = "agent_runs_per_month"
	QuotaAgentTokens    QuotaKind = "agent_tokens_per_month"
	QuotaLLMCost        QuotaKind = "llm_cost_usd_per_month"
)

// QuotaKinds lists every quota in display order.
func QuotaKinds() []QuotaKind {
	return []QuotaKind{QuotaMembers, QuotaProjects, QuotaEnabledTasks, QuotaConnectors, QuotaChannels,
		QuotaKnowledgeBytes, QuotaWebhookEvents, QuotaAgentRuns, QuotaAgentTokens, QuotaLLMCost}
}

// Monthly reports a rate-like quota: it resets at the start of each UTC month.
func (k QuotaKind) Monthly() bool {
	switch k {
	case QuotaWebhookEvents, QuotaAgentRuns, QuotaAgentTokens, QuotaLLMCost:
		return true
	}
	return false
}

// QuotaError refuses a create that would pass a plan's limit. The server
// answers 402 (429 with Retry-After for monthly quotas) naming the quota,
// its limit and the current use.
type QuotaError struct {
	Quota   QuotaKind
	Plan    string
	Limit   float64
	Current float64
	// ReadOnly: the org is past its payment grace period; nothing new is created.
	ReadOnly bool
	// Feature: the plan does not include the feature this create needs.
	Feature string
	// RetryAfter is the time until the quota resets (monthly quotas only).
	RetryAfter time.Duration
}

func (e *QuotaError) Error() string {
	if e.ReadOnly {
		return "the organization is read-only: its payment is past due beyond the grace period; update the payment method in the billing page"
	}
	if e.Feature != "" {
		return fmt.Sprintf("plan %s does not include %s (quota %s: limit 0)", e.Plan, e.Feature, e.Quota)
	}
	return fmt.Sprintf("quota %s exceeded: limit %s, current use %s (plan %s)", e.Quota, fmtQty(e.Limit), fmtQty(e.Current), e.Plan)
}

func fmtQty(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// IsQuotaError reports whether err is a quota refusal.
func IsQuotaError(err error) bool {
	if err == nil {
		return false // without an allocation: called per webhook event
	}
	var q *QuotaError
	return errors.As(err, &q)
}

// QuotaGate decides, inside the write transaction that adds n things of
// kind to org, whether the org's plan allows it; it returns a *QuotaError
// when not. The one writer connection serializes these transactions, so a
// count read here cannot be overtaken by a concurrent create.
type QuotaGate func(ctx context.Context, tx *Tx, kind QuotaKind, orgID string, n int64) error

// SetQuotaGate installs the gate every create consults (nil: no quotas,
// billing off). Set it before serving.
func (db *DB) SetQuotaGate(g QuotaGate) error {
	if g == nil {
		db.gate.Store(nil)
		return nil
	}
	// The gate's queries are not prepared on the writer up front: on SQLite
	// its common path runs none (billing_bounds.go), and every statement
	// kept prepared on the writer connection made each statement parsed
	// there afterwards slower (SQLite's per-connection lookaside memory is
	// shared by the kept statements, so parsing falls back to malloc): with
	// the eight gate queries kept, a project create's INSERT took about
	// 20 us more to parse, 5-10 % of the create, in every create, gated
	// or not. The webhook ingest's group commit learns its hot statements
	// (txprepared.go), the counter bump among them.
	db.gate.Store(&g)
	return nil
}

// queryRowFast runs a query of the write transaction through the writer's
// prepared statement when there is one, detached from ctx's cancellation:
// a point read by key takes microseconds, while a cancellable context costs
// two watcher goroutines per query (see readRow).
func (tx *Tx) queryRowFast(ctx context.Context, q string, args ...any) *sql.Row {
	ctx = context.WithoutCancel(ctx)
	if tx.db != nil {
		if st, ok := tx.db.wstmts.Load(q); ok {
			return tx.StmtContext(ctx, st.(*sql.Stmt)).QueryRowContext(ctx, args...)
		}
	}
	return tx.QueryRowContext(ctx, q, args...)
}

func (tx *Tx) execFast(ctx context.Context, q string, args ...any) (sql.Result, error) {
	ctx = context.WithoutCancel(ctx)
	if tx.db != nil {
		if st, ok := tx.db.wstmts.Load(q); ok {
			return tx.StmtContext(ctx, st.(*sql.Stmt)).ExecContext(ctx, args...)
		}
	}
	return tx.ExecContext(ctx, q, args...)
}

const (
	queryMembers = `SELECT (SELECT count(*) FROM org_members WHERE org_id = ?1) +
		(SELECT count(*) FROM invitations WHERE org_id = ?1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?2)`
	queryCount        = `SELECT COALESCE((SELECT n FROM billing_counts WHERE org_id = ? AND kind = ?), 0)`
	bumpCounter       = `UPDATE billing_counters SET n = n + ? WHERE org_id = ? AND period = ? AND meter = ? RETURNING n`
	insertCounter     = `INSERT INTO billing_counters (org_id, period, meter, n) VALUES (?,?,?,?)`
	updateCounter     = `UPDATE billing_counters SET n = n + ? WHERE org_id = ? AND period = ? AND meter = ?`
	queryWebhookMonth = `SELECT count(*) FROM webhook_events WHERE org_id = ? AND received_at >= ? AND test = 0 AND replay_of IS NULL`
)

const queryChannels = `SELECT count(*) FROM channels WHERE org_id = ?`

// CheckQuota asks the installed gate whether org may add n of kind; without
// a gate (billing off) it allows everything at no cost.
func (tx *Tx) CheckQuota(ctx context.Context, kind QuotaKind, orgID string, n int64) error {
	if tx.gate == nil || n <= 0 {
		return nil
	}
	return tx.gate(ctx, tx, kind, orgID, n)
}

// QuotaCounter counts the current use of a quota of an org. Features built
// elsewhere (channels) register theirs with RegisterQuotaCounter.
type QuotaCounter func(ctx context.Context, q Querier, orgID string, now time.Time) (int64, error)

var quotaCounters sync.Map // QuotaKind -> QuotaCounter

// RegisterQuotaCounter makes kind countable by QuotaUse. The channels
// feature registers QuotaChannels here and calls tx.CheckQuota(ctx,
// QuotaChannels, orgID, 1) in the transaction that creates a channel.
func RegisterQuotaCounter(kind QuotaKind, fn QuotaCounter) { quotaCounters.Store(kind, fn) }

// row runs a counter query: prepared inside a write transaction, plain on a reader.
func row(ctx context.Context, q Querier, query string, args ...any) *sql.Row {
	if tx, ok := q.(*Tx); ok {
		return tx.queryRowFast(ctx, query, args...)
	}
	return q.QueryRowContext(ctx, query, args...)
}

func init() {
	// Projects, enabled tasks and connectors are counted by triggers
	// (migration 0081): one row read whatever the org's size. Archived
	// projects keep their data, so they count until deleted.
	for _, k := range []QuotaKind{QuotaProjects, QuotaEnabledTasks, QuotaConnectors} {
		RegisterQuotaCounter(k, func(ctx context.Context, q Querier, orgID string, _ time.Time) (int64, error) {
			var n int64
			err := row(ctx, q, queryCount, orgID, string(k)).Scan(&n)
			return n, err
		})
	}
	// An org's chat channels are few (at most MaxChannelsPerProject a project).
	RegisterQuotaCounter(QuotaChannels, func(ctx context.Context, q Querier, orgID string, _ time.Time) (int64, error) {
		var n int64
		err := row(ctx, q, queryChannels, orgID).Scan(&n)
		return n, err
	})
	// Pending invitations hold a seat: accepting one never has to be refused.
	RegisterQuotaCounter(QuotaMembers, func(ctx context.Context, q Querier, orgID string, now time.Time) (int64, error) {
		var n int64
		err := row(ctx, q, queryMembers, orgID, TS(now)).Scan(&n)
		return n, err
	})
}

// QuotaUse is the current use of a counted quota; ok is false for a kind
// nothing counts (channels before that feature registers its counter).
func QuotaUse(ctx context.Context, q Querier, kind QuotaKind, orgID string, now time.Time) (n int64, ok bool, err error) {
	v, found := quotaCounters.Load(kind)
	if !found {
		return 0, false, nil
	}
	n, err = v.(QuotaCounter)(ctx, q, orgID, now)
	return n, true, err
}

// Period is the UTC month of t as YYYY-MM, the unit of monthly quotas,
// metering and statements.
func Period(t time.Time) string { return t.UTC().Format("2006-01") }

// PeriodBounds returns the first instant of period and of the next one.
func PeriodBounds(period string) (start, end time.Time, err error) {
	start, err = time.Parse("2006-01", period)
	if err != nil {
		return start, end, Errorf(EInvalid, "period must look like 2026-11")
	}
	return start, start.AddDate(0, 1, 0), nil
}

// BumpMonthlyCounter adds n to org's counter of meter for the month of
// tx.Now and returns the value after the bump, in one statement on the
// common path. A missing counter is stored seeded with seed() (what the
// recorded data already holds for the month), so turning billing on
// mid-month starts from the truth rather than from zero.
func BumpMonthlyCounter(ctx context.Context, tx *Tx, orgID, meter string, n int64, seed func() (int64, error)) (int64, error) {
	period := Period(tx.Now)
	var after int64
	err := tx.queryRowFast(ctx, bumpCounter, n, orgID, period, meter).Scan(&after)
	if !errors.Is(err, sql.ErrNoRows) {
		return after, err
	}
	base, err := seed()
	if err != nil {
		return 0, err
	}
	_, err = tx.execFast(ctx, insertCounter, orgID, period, meter, base+n)
	return base + n, err
}

// UnbumpMonthlyCounter takes back a bump the gate refused.
func UnbumpMonthlyCounter(ctx context.Context, tx *Tx, orgID, meter string, n int64) error {
	_, err := tx.execFast(ctx, updateCounter, -n, orgID, Period(tx.Now), meter)
	return err
}

// CountWebhookEventsSince counts the deliveries an org received since t
// (test deliveries and replays are not new events).
func CountWebhookEventsSince(ctx context.Context, q Querier, orgID string, since time.Time) (int64, error) {
	var n int64
	err := q.QueryRowContext(ctx, queryWebhookMonth, orgID, TS(since)).Scan(&n)
	return n, err
}

// AgentUse is what an org's agent sessions used since an instant.
type AgentUse struct {
	Runs   int64
	Tokens int64
	Cost   float64
}

// FindAgentUse sums the org's agent sessions created since t, and the
// tokens and cost of its model calls outside sessions (postmortem drafts):
// the monthly run, token and cost quotas read it when a run starts.
func (db *DB) FindAgentUse(ctx context.Context, orgID string, since time.Time) (AgentUse, error) {
	var u AgentUse
	err := db.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM agent_sessions WHERE org_id = ?1 AND created_at >= ?2 AND unmetered = 0),
		(SELECT COALESCE(SUM(tokens_in + tokens_out), 0) FROM agent_sessions WHERE org_id = ?1 AND created_at >= ?2) +
		(SELECT COALESCE(SUM(tokens_in + tokens_out), 0) FROM llm_calls WHERE org_id = ?1 AND created_at >= ?2),
		(SELECT COALESCE(SUM(cost), 0) FROM agent_sessions WHERE org_id = ?1 AND created_at >= ?2) +
		(SELECT COALESCE(SUM(cost), 0) FROM llm_calls WHERE org_id = ?1 AND created_at >= ?2)`,
		orgID, TS(since)).Scan(&u.Runs, &u.Tokens, &u.Cost)
	return u, err
}
