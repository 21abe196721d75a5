package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// MeterRow is one metered quantity of an org in a period, per project
// ("" for what belongs to no project, such as org-wide documents).
type MeterRow struct {
	ProjectID string
	Meter     string
	Quantity  float64
}

// UsagePeriod is a metered period's header.
type UsagePeriod struct {
	Period     string
	PlanID     string
	Closed     bool
	ComputedAt time.Time
}

// The meter names the store computes from recorded data.
const (
	meterRuns      = "agent_runs"
	meterTokens    = "agent_tokens"
	meterCost      = "llm_cost_usd"
	meterEvents    = "webhook_events"
	meterKnowBytes = "knowledge_bytes"
)

// ComputeUsage sums what the org recorded in period per project: agent
// sessions created in it (runs, tokens, model cost; a run the caps refused
// is no run), model calls made
// outside sessions (llm_calls: postmortem drafts; tokens and cost, not
// runs) and webhook deliveries received in it (test deliveries and replays
// excluded). Knowledge storage is a snapshot the caller adds, since
// documents live in files.
func (db *DB) ComputeUsage(ctx context.Context, orgID, period string) ([]MeterRow, error) {
	start, end, err := PeriodBounds(period)
	if err != nil {
		return nil, err
	}
	var out []MeterRow
	rows, err := db.r.QueryContext(ctx, `SELECT project_id, SUM(runs), SUM(tokens), SUM(cost) FROM (
		SELECT project_id, SUM(CASE WHEN unmetered = 0 THEN 1 ELSE 0 END) AS runs, COALESCE(SUM(tokens_in + tokens_out), 0) AS tokens, COALESCE(SUM(cost), 0) AS cost
		FROM agent_sessions WHERE org_id = ?1 AND created_at >= ?2 AND created_at < ?3 GROUP BY project_id
		UNION ALL
		SELECT project_id, 0, COALESCE(SUM(tokens_in + tokens_out), 0), COALESCE(SUM(cost), 0)
		FROM llm_calls WHERE org_id = ?1 AND created_at >= ?2 AND created_at < ?3 GROUP BY project_id
		) u GROUP BY project_id ORDER BY project_id`,
		orgID, TS(start), TS(end))
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var p string
		var runs, tokens, cost float64
		if err := rows.Scan(&p, &runs, &tokens, &cost); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, MeterRow{p, meterRuns, runs}, MeterRow{p, meterTokens, tokens}, MeterRow{p, meterCost, cost})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = db.r.QueryContext(ctx, `SELECT project_id, count(*) FROM webhook_events WHERE org_id = ? AND received_at >= ?
		AND received_at < ? AND test = 0 AND replay_of IS NULL GROUP BY project_id ORDER BY project_id`, orgID, TS(start), TS(end))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		var n float64
		if err := rows.Scan(&p, &n); err != nil {
			return nil, err
		}
		out = append(out, MeterRow{p, meterEvents, n})
	}
	return out, rows.Err()
}

// SaveUsage replaces the stored usage of org's period with rows in one
// transaction, so computing a period again is idempotent. keepKnowledge
// keeps the stored knowledge snapshot (a closed month recomputed later
// cannot know what the files held then).
func (db *DB) SaveUsage(ctx context.Context, orgID string, p UsagePeriod, rows []MeterRow, keepKnowledge bool) error {
	return db.Write(ctx, func(tx *Tx) error {
		q := `DELETE FROM billing_usage WHERE org_id = ? AND period = ?`
		if keepKnowledge {
			q += ` AND meter != '` + meterKnowBytes + `'`
		}
		if _, err := tx.ExecContext(ctx, q, orgID, p.Period); err != nil {
			return err
		}
		for _, r := range rows {
			if _, err := tx.ExecContext(ctx, `INSERT INTO billing_usage (org_id, period, project_id, meter, quantity, computed_at)
				VALUES (?,?,?,?,?,?) ON CONFLICT (org_id, period, project_id, meter) DO UPDATE SET quantity = excluded.quantity,
				computed_at = excluded.computed_at`, orgID, p.Period, r.ProjectID, r.Meter, r.Quantity, TS(tx.Now)); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO billing_periods (org_id, period, plan_id, closed, computed_at) VALUES (?,?,?,?,?)
			ON CONFLICT (org_id, period) DO UPDATE SET plan_id = excluded.plan_id, closed = excluded.closed,
			computed_at = excluded.computed_at`, orgID, p.Period, p.PlanID, p.Closed, TS(tx.Now))
		return err
	})
}

// FindUsagePeriod returns a stored period's header; NotFound when never computed.
func (db *DB) FindUsagePeriod(ctx context.Context, orgID, period string) (*UsagePeriod, error) {
	p := &UsagePeriod{Period: period}
	var computed string
	err := db.r.QueryRowContext(ctx, `SELECT plan_id, closed, computed_at FROM billing_periods WHERE org_id = ? AND period = ?`,
		orgID, period).Scan(&p.PlanID, &p.Closed, &computed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("usage period")
	}
	p.ComputedAt = ParseTS(computed)
	return p, err
}

// FindUsagePeriods lists the org's metered periods, newest first.
func (db *DB) FindUsagePeriods(ctx context.Context, orgID string, limit int) ([]UsagePeriod, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT period, plan_id, closed, computed_at FROM billing_periods WHERE org_id = ?
		ORDER BY period DESC LIMIT ?`, orgID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []UsagePeriod
	for rows.Next() {
		var p UsagePeriod
		var computed string
		if err := rows.Scan(&p.Period, &p.PlanID, &p.Closed, &computed); err != nil {
			return nil, err
		}
		p.ComputedAt = ParseTS(computed)
		out = append(out, p)
	}
	return out, rows.Err()
}

// FindUsage returns the stored rows of org's period, by project then meter.
func (db *DB) FindUsage(ctx context.Context, orgID, period string) ([]MeterRow, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT project_id, meter, quantity FROM billing_usage WHERE org_id = ? AND period = ?
		ORDER BY project_id, meter`, orgID, period)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []MeterRow
	for rows.Next() {
		var r MeterRow
		if err := rows.Scan(&r.ProjectID, &r.Meter, &r.Quantity); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ProjectNames maps the org's project ids to names (deleted projects are
// absent; statements still list their usage by id).
func (db *DB) ProjectNames(ctx context.Context, orgID string) (map[string]string, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, name FROM projects WHERE org_id = ?`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, err
		}
		out[id] = name
	}
	return out, rows.Err()
}
