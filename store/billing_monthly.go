package store

import (
	"context"
	"database/sql"
	"errors"
)

// monthBump is one monthly counter a transaction adds to (see BumpMonthlyWithin).
type monthBump struct {
	orgID, meter, period string
	base                 int64 // the counter when the transaction first used it
	n                    int64 // what the transaction adds
	missing              bool  // no stored row yet: base is the seed, inserted at the end
}

const queryCounter = `SELECT n FROM billing_counters WHERE org_id = ? AND period = ? AND meter = ?`

// BumpMonthlyWithin adds n to org's counter of meter for the month of
// tx.Now unless that would pass limit (limited false: no limit, the counter
// is still kept, so a later plan with one starts from the month's real
// count). over reports a refusal, with the counter left as it was and cur
// its value.
//
// On SQLite the one writer sees every increment, so the DB keeps each
// counter of the current month exactly in memory (read from the database,
// or seeded, on first use and on a new month) and decides against it:
// nothing is read or written per call. The transaction adds up its
// increments per counter and writes them with one UPDATE per counter just
// before it commits (a group commit of webhook deliveries: one per org per
// batch, not one per event); the new values reach memory only after the
// commit, so a rolled-back or retried transaction leaves them as they were.
// boundsMu is held from the first call to the transaction's end, as for
// CountedOver, so the next transaction sees what this one stored.
// Servers sharing a PostgreSQL database bump concurrently: there every call
// bumps the stored counter.
func BumpMonthlyWithin(ctx context.Context, tx *Tx, orgID, meter string, n int64, limit float64, limited bool,
	seed func() (int64, error)) (over bool, cur int64, err error) {
	if tx.db == nil || tx.db.Shared() {
		return bumpMonthlyShared(ctx, tx, orgID, meter, n, limit, limited, seed)
	}
	period := Period(tx.Now)
	key := orgID + "\x00" + meter + "\x00" + period
	p := tx.monthPending[key]
	if p == nil {
		if p, err = tx.startMonthBump(ctx, key, orgID, meter, period, seed); err != nil {
			return false, 0, err
		}
	}
	cur = p.base + p.n
	if limited && float64(cur+n) > limit {
		return true, cur, nil
	}
	p.n += n
	return false, 0, nil
}

// startMonthBump takes the counter's current value from memory, else from
// the database (else seed), and arranges the write before commit and the
// memory update after it.
func (tx *Tx) startMonthBump(ctx context.Context, key, orgID, meter, period string, seed func() (int64, error)) (*monthBump, error) {
	db := tx.db
	if !tx.boundsLocked {
		db.boundsMu.Lock()
		tx.boundsLocked = true
	}
	if db.monthPeriod != period {
		// A new month (or the first use): last month's counters are final.
		db.monthCounts = map[string]int64{}
		db.monthPeriod = period
	}
	p := &monthBump{orgID: orgID, meter: meter, period: period}
	if v, ok := db.monthCounts[key]; ok {
		p.base = v
	} else {
		// Once per counter and month: not worth a statement kept prepared on
		// the writer (each kept one slows later parses there; see SetQuotaGate).
		err := tx.Tx.QueryRowContext(context.WithoutCancel(ctx), queryCounter, orgID, period, meter).Scan(&p.base)
		if errors.Is(err, sql.ErrNoRows) {
			p.missing = true
			p.base, err = seed()
		}
		if err != nil {
			return nil, err
		}
	}
	if tx.monthPending == nil {
		tx.monthPending = map[string]*monthBump{}
		tx.beforeCommit = append(tx.beforeCommit, func() error { return tx.flushMonthBumps(ctx) })
		tx.onCommit = append(tx.onCommit, func() {
			if db.monthPeriod != period {
				return // the month changed meanwhile; the next use reads the database
			}
			for k, p := range tx.monthPending {
				if p.period == period {
					db.monthCounts[k] = p.base + p.n
				}
			}
		})
	}
	tx.monthPending[key] = p
	return p, nil
}

// flushMonthBumps writes the transaction's monthly increments, one
// statement per counter.
func (tx *Tx) flushMonthBumps(ctx context.Context) error {
	for _, p := range tx.monthPending {
		var err error
		switch {
		case p.missing:
			_, err = tx.Tx.ExecContext(context.WithoutCancel(ctx), insertCounter, p.orgID, p.period, p.meter, p.base+p.n)
		case p.n != 0:
			_, err = tx.execFast(ctx, updateCounter, p.n, p.orgID, p.period, p.meter)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// bumpMonthlyShared bumps the stored counter in the statement that decides
// (PostgreSQL: several servers add to it concurrently). Without a limit it
// is one executed UPDATE; with one it reads the value back, and takes the
// bump back when it passed the limit.
func bumpMonthlyShared(ctx context.Context, tx *Tx, orgID, meter string, n int64, limit float64, limited bool,
	seed func() (int64, error)) (over bool, cur int64, err error) {
	if !limited {
		res, err := tx.execFast(ctx, updateCounter, n, orgID, Period(tx.Now), meter)
		if err != nil {
			return false, 0, err
		}
		if k, err := res.RowsAffected(); err != nil || k > 0 {
			return false, 0, err
		}
		// No counter yet this month: seeded below.
	}
	after, err := BumpMonthlyCounter(ctx, tx, orgID, meter, n, seed)
	if err != nil {
		return false, 0, err
	}
	if limited && float64(after) > limit {
		if err := UnbumpMonthlyCounter(ctx, tx, orgID, meter, n); err != nil {
			return false, 0, err
		}
		return true, after - n, nil
	}
	return false, after, nil
}
