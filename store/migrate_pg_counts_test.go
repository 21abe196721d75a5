package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// The move copies the trigger-kept billing counts exactly: PostgreSQL's
// triggers fire as projects and tasks are copied in, and a count the
// appliance kept at 0 (its last project deleted) has a row they never make.
func TestCopyToKeepsBillingCounts(t *testing.T) {
	pg, _ := openTempPG(t)
	ctx := context.Background()
	lite, err := Open(ctx, filepath.Join(t.TempDir(), "opsagent.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	never := func(*Task, time.Time) (*time.Time, error) { return nil, nil }
	var orgA, orgB, gone string
	err = lite.Write(ctx, func(tx *Tx) error {
		u := &User{Email: "move@example.com", Name: "m"}
		if err := createUserTx(ctx, tx, u); err != nil {
			return err
		}
		a, b := &Organization{Name: "a"}, &Organization{Name: "b"}
		if err := createOrgTx(ctx, tx, a, u.ID); err != nil {
			return err
		}
		if err := createOrgTx(ctx, tx, b, u.ID); err != nil {
			return err
		}
		orgA, orgB = a.ID, b.ID
		p, q := &Project{OrgID: orgA, Name: "p"}, &Project{OrgID: orgB, Name: "q"}
		if err := createProjectTx(ctx, tx, p); err != nil {
			return err
		}
		if err := createProjectTx(ctx, tx, q); err != nil {
			return err
		}
		gone = q.ID
		for _, on := range []bool{true, true, false} {
			tk := &Task{OrgID: orgA, ProjectID: p.ID, Name: NewID(), Prompt: "x", Enabled: on, MissedFirePolicy: "skip",
				OverlapPolicy: "queue", Timezone: "UTC", AgentType: "default"}
			if err := createTaskTx(ctx, tx, tk, never); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := lite.DeleteProject(ctx, orgB, gone); err != nil {
		t.Fatal(err)
	}
	rep, err := lite.CopyTo(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("verification: %v", rep.Mismatch)
	}
	for _, c := range []struct {
		org  string
		kind QuotaKind
		want int64
	}{{orgA, QuotaProjects, 1}, {orgA, QuotaEnabledTasks, 2}, {orgB, QuotaProjects, 0}} {
		got, _, err := QuotaUse(ctx, pg.r, c.kind, c.org, time.Now())
		if err != nil || got != c.want {
			t.Errorf("%s of %s on PostgreSQL: got %d (%v), want %d", c.kind, c.org, got, err, c.want)
		}
	}
	// The triggers still count after the move.
	if err := pg.CreateProject(ctx, &Project{OrgID: orgB, Name: "r"}); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := QuotaUse(ctx, pg.r, QuotaProjects, orgB, time.Now()); got != 1 {
		t.Fatalf("projects of b after the move: %d", got)
	}
}
