package store

import (
	"context"
	"testing"
)

// A table that outgrew its statistics (here: never had any) is analyzed,
// its indexed columns only.
func TestAnalyzeGrownTables(t *testing.T) {
	db, _ := openTempPG(t)
	ctx := context.Background()
	if _, err := db.w.ExecContext(ctx, `CREATE TABLE grown (id TEXT PRIMARY KEY, k TEXT, body TEXT);
		CREATE INDEX grown_k ON grown(k);
		INSERT INTO grown SELECT g::text, (g % 7)::text, repeat('x', 100) FROM generate_series(1, 3000) g;
		SELECT pg_stat_force_next_flush()`); err != nil {
		t.Fatal(err)
	}
	stats := func() (tuples float64, cols int) {
		if err := db.r.QueryRowContext(ctx, `SELECT c.reltuples, (SELECT count(*) FROM pg_stats WHERE tablename = 'grown')
			FROM pg_class c WHERE c.relname = 'grown'`).Scan(&tuples, &cols); err != nil {
			t.Fatal(err)
		}
		return
	}
	db.analyzeGrown(ctx)
	tuples, cols := stats()
	if tuples != 3000 || cols != 2 {
		t.Fatalf("after the pass: %v rows, %d columns with statistics; want 3000 and the two indexed", tuples, cols)
	}
}
