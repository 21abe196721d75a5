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
	// On the small sample (pgAnalyzeTarget), and the pool's sessions keep the default target.
	var bounds int
	var target string
	if err := db.r.QueryRowContext(ctx, `SELECT cardinality(histogram_bounds::text::text[]) FROM pg_stats
		WHERE tablename = 'grown' AND attname = 'id'`).Scan(&bounds); err != nil {
		t.Fatal(err)
	}
	if err := db.locks.QueryRowContext(ctx, `SHOW default_statistics_target`).Scan(&target); err != nil {
		t.Fatal(err)
	}
	if bounds > pgAnalyzeTarget+1 || target != "100" {
		t.Fatalf("id's histogram has %d bounds (want <= %d); the pool's target is %s (want 100)", bounds, pgAnalyzeTarget+1, target)
	}
}
