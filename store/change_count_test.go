package store

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// The feed's total is exact up to ChangeCountCap and "at least" beyond it;
// a page that is not full, or a page past the cap, still tells the truth.
func TestListChangesCountsUpToTheCap(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t)
	var org string
	var projects []string
	now := time.Now().UTC()
	n := ChangeCountCap + 30
	if err := db.Write(ctx, func(tx *Tx) error {
		var err error
		if org, projects, err = seedOrgTx(ctx, tx, "cap", "prod"); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			svc := "api"
			if i%100 == 0 {
				svc = "db" // 11 of them
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO changes (`+changeCols+`, label_pairs, dedupe_key) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
				NewID(), org, projects[0], "api", "deploy", "deploy", svc, "", "", "", "{}", "", "", TS(now.Add(-time.Duration(i)*time.Minute)), TS(now), "", fmt.Sprint("k", i)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		f    ChangeFilter
		rows int
		want ChangeTotal
	}{
		{"first page of all", ChangeFilter{Limit: 50}, 50, ChangeTotal{N: ChangeCountCap, Capped: true}},
		{"a service, not a full page", ChangeFilter{Service: "db", Limit: 50}, 11, ChangeTotal{N: 11}},
		{"a service, a full page", ChangeFilter{Service: "db", Limit: 5}, 5, ChangeTotal{N: 11}},
		{"the last page", ChangeFilter{Limit: 50, Offset: n - 20}, 20, ChangeTotal{N: n}},
		{"past the end", ChangeFilter{Service: "db", Limit: 50, Offset: 100}, 0, ChangeTotal{N: 11}},
	} {
		c.f.OrgID, c.f.ProjectID = org, projects[0]
		cs, got, err := db.ListChangesCounted(ctx, c.f)
		if err != nil || len(cs) != c.rows || got != c.want {
			t.Errorf("%s: %d rows, total %+v, %v; want %d rows, total %+v", c.name, len(cs), got, err, c.rows, c.want)
		}
	}
}
