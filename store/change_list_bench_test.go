package store

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// BenchmarkListChanges100k lists a project's feed of 100k changes with the
// filters the console, the CLI and an investigation use (in process: where
// the time of issue 36's list row goes; the row itself is `.ci/bench.sh
// changes` on the built binary):
//
//	go test ./store -run '^$' -bench ListChanges100k -benchtime 200x
func BenchmarkListChanges100k(b *testing.B) {
	ctx := context.Background()
	db, _ := openTemp(b)
	var org string
	var projects []string
	now := time.Now().UTC()
	const n = 100000
	if err := db.Write(ctx, func(tx *Tx) error {
		var err error
		if org, projects, err = seedOrgTx(ctx, tx, "feed", "prod", "other"); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			svc := fmt.Sprintf("svc-%d", i%50)
			labels := map[string]string{"team": []string{"payments", "search", "core", "edge"}[i%4], "region": []string{"eu", "us"}[i%2]}
			at := now.Add(-time.Duration(n-i) * 80 * 24 * time.Hour / n)
			if _, err := tx.ExecContext(ctx, `INSERT INTO changes (`+changeCols+`, label_pairs, dedupe_key) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
				NewID(), org, projects[0], "generic", "deploy", "deploy "+svc, svc, "production", "", "", `{"region":"`+labels["region"]+`","team":"`+labels["team"]+`"}`,
				"ci@example.com", fmt.Sprint("build-", i), TS(at), TS(at), labelPairs(labels), fmt.Sprint("ext:build-", i)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	if x := os.Getenv("OPSAGENT_BENCH_SQL"); x != "" {
		if err := db.Write(ctx, func(tx *Tx) error { _, err := tx.ExecContext(ctx, x); return err }); err != nil {
			b.Fatal(err)
		}
	}
	hour, week := now.Add(-time.Hour), now.Add(-7*24*time.Hour)
	for _, f := range []struct {
		name string
		f    ChangeFilter
	}{
		{"newest", ChangeFilter{}},
		{"hour", ChangeFilter{Since: &hour, Until: &now}},
		{"service", ChangeFilter{Service: "svc-7"}},
		{"label", ChangeFilter{Labels: map[string]string{"team": "payments"}}},
		{"service_source_week", ChangeFilter{Service: "svc-7", Source: "generic", Since: &week}},
		{"service_page20", ChangeFilter{Service: "svc-7", Offset: 1000}},
	} {
		f.f.OrgID, f.f.ProjectID = org, projects[0]
		b.Run(f.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				cs, total, err := db.ListChanges(ctx, f.f)
				if err != nil || len(cs) == 0 || total == 0 {
					b.Fatalf("%d changes of %d: %v", len(cs), total, err)
				}
			}
		})
	}
}
