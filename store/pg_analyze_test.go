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

// A fresh database's ingest tables get their first statistics as soon as
// the ingest stored pgAnalyzeMinRows events (the keeper is woken), not at
// a later tick once the backends' counts show the rows.
func TestFreshIngestTablesAnalyzedAtOnce(t *testing.T) {
	db, _ := openTempPG(t)
	db.analyzeStop() // no tick: what the kick starts is run here
	ctx := context.Background()
	hook := benchWebhook(t, db)
	reltuples := func(table string) float64 {
		var n float64
		if err := db.r.QueryRowContext(ctx, `SELECT reltuples FROM pg_class WHERE oid = ?::regclass`, table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := reltuples("incidents"); n >= 0 {
		t.Fatalf("a fresh database's incidents have statistics (%v rows)", n)
	}
	for i := 0; i < pgAnalyzeMinRows-50; i += 50 {
		if _, err := db.InsertWebhookEvents(ctx, distinctAlerts(hook, i, i+50)); err != nil {
			t.Fatal(err)
		}
	}
	if len(db.analyzeKick) != 0 {
		t.Fatal("the keeper was woken before the ingest stored its first rows' worth")
	}
	if _, err := db.InsertWebhookEvents(ctx, distinctAlerts(hook, pgAnalyzeMinRows-50, pgAnalyzeMinRows)); err != nil {
		t.Fatal(err)
	}
	if len(db.analyzeKick) != 1 {
		t.Fatal("the keeper was not woken once the ingest stored its first rows' worth")
	}
	<-db.analyzeKick
	db.analyzeFresh(ctx)
	for _, table := range pgIngestTables {
		if n := reltuples(table); n < 0 {
			t.Fatalf("%s still has no statistics", table)
		}
	}
	if n := reltuples("incidents"); n != pgAnalyzeMinRows {
		t.Fatalf("incidents analyzed with %v rows, want %d", n, pgAnalyzeMinRows)
	}
}
