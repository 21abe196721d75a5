package store

import (
	"context"
	"testing"
	"time"
)

// BenchmarkHeldKeysLoad measures the read-back of a project's held keys
// after a restart (keyBatch.ensure) with 100k open incidents: the first
// lookup of each project pays it once.
func BenchmarkHeldKeysLoad(b *testing.B) {
	sqliteOnly(b)
	db, _ := openTemp(b)
	ctx := context.Background()
	hook := benchWebhook(b, db)
	const open = 100_000
	now := time.Now().UTC()
	if err := db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < ?)
			INSERT INTO incidents (id, org_id, project_id, provider, title, severity, opened_at, last_alert_at, created_at,
			updated_at, main_key_held) SELECT printf('00000000-0000-7000-8000-%012d', i), ?, ?, 'alertmanager', 't', 'warning',
			?, ?, ?, ?, 'group:' || i FROM n`, open, hook.OrgID, hook.ProjectID, TS(now), TS(now), TS(now), TS(now))
		return err
	}); err != nil {
		b.Fatal(err)
	}
	var took time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		began := time.Now()
		if err := db.Write(ctx, func(tx *Tx) error {
			st := newTxStmts(tx)
			return st.keys().ensure(ctx, st, hook.ProjectID, time.Hour)
		}); err != nil {
			b.Fatal(err)
		}
		if n := len(db.keyMemory().m); n != open {
			b.Fatalf("loaded %d keys", n)
		}
		took += time.Since(began)
		db.keyMemory().m, db.keyMemory().projects, db.keyMemory().byIdx = map[uint64]keyEntry{}, map[string]*keyProject{}, nil
	}
	b.ReportMetric(float64(took.Nanoseconds())/float64(b.N)/open, "ns/incident")
}
