package store

import (
	"context"
	"math"
	"sync/atomic"
)

// TriggerCounted reports a quota whose count triggers keep in
// billing_counts (migration 0081): CountedOver can check it.
func TriggerCounted(kind QuotaKind) bool {
	return kind == QuotaProjects || kind == QuotaEnabledTasks || kind == QuotaConnectors
}

// CountedOver reports whether adding n of a trigger-counted kind to org
// would pass limit. It is the quota gate's common path on every guarded
// create, so on SQLite it usually reads nothing: the DB keeps an upper bound
// of each count it has checked, raised by every create it lets through, and
// a create whose bound plus n stays within the limit cannot pass it. Only
// near the limit (or on the first create of an org since the start) is the
// count read, and the bound reset to it.
//
// The bound is exact or above the truth because on SQLite every write
// transaction runs on the one writer connection, one at a time, and every
// row the triggers count is added through this gate (createProjectTx,
// createTaskTx and UpdateTask enabling, the connector create call
// CheckQuota before they insert): a create raises the bound before its row
// exists, a rollback leaves it high, and deletes only lower the truth. A
// bound read inside a transaction is stored only once it commits (the
// transaction may have deleted rows before, which a rollback brings back),
// and the transaction holds boundsMu from its first check to its end, so
// no other transaction uses the bound in between.
// Servers sharing a PostgreSQL database add rows this one never sees, and
// their transactions run concurrently: there every check reads the count.
func CountedOver(ctx context.Context, tx *Tx, kind QuotaKind, orgID string, n int64, limit float64) (bool, error) {
	if float64(n) > limit {
		return true, nil // over whatever the count (an org without a row counts 0)
	}
	bounded := tx.db != nil && !tx.db.Shared()
	key := orgID + "\x00" + string(kind)
	if bounded {
		if !tx.boundsLocked {
			// Held until this transaction's end, after its onCommit: the
			// next transaction, which may start as soon as this one commits,
			// sees the bound this one stores.
			tx.db.boundsMu.Lock()
			tx.boundsLocked = true
		}
		if v, ok := tx.db.countBounds.Load(key); ok {
			b := v.(*atomic.Int64)
			if float64(b.Load()+n) <= limit {
				b.Add(n)
				return false, nil
			}
		}
	}
	if !bounded {
		// One statement executed, not queried: database/sql starts a
		// goroutine for every result set read inside a transaction and scans
		// it through reflection, which costs more than SQLite's point lookup.
		res, err := tx.execFast(ctx, overCount, orgID, string(kind), n, int64(math.Floor(limit)))
		if err != nil {
			return false, err
		}
		matched, err := res.RowsAffected()
		return matched > 0, err
	}
	var cur int64
	if err := tx.queryRowFast(ctx, queryCount, orgID, string(kind)).Scan(&cur); err != nil {
		return false, err
	}
	over := float64(cur+n) > limit
	after := cur
	if !over {
		after += n
	}
	db := tx.db
	tx.onCommit = append(tx.onCommit, func() {
		b := &atomic.Int64{}
		b.Store(after)
		db.countBounds.Store(key, b)
	})
	return over, nil
}

// overCount matches the org's count row only when adding ?3 would pass the
// limit ?4; it changes nothing (n = n), and it only matches when the create
// is refused, whose transaction rolls back. Counts are whole: n + count >
// limit exactly when it passes limit's floor.
const overCount = `UPDATE billing_counts SET n = n WHERE org_id = ? AND kind = ? AND n + ? > ?`
