package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// Three servers append to one organization's audit chain at once: the
// chain has no gap and no fork, and verifies.
func TestAuditChainSeveralWriters(t *testing.T) {
	a, u := openTempPG(t)
	ctx := context.Background()
	dbs := []*DB{a}
	for i := 0; i < 2; i++ {
		d, err := OpenPostgres(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		dbs = append(dbs, d)
	}
	org := NewID()
	var wg sync.WaitGroup
	for n, d := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				batch := []*AuditRecord{{OrgID: org, Action: fmt.Sprintf("node%d.%d", n, i), Outcome: "success"},
					{OrgID: NewID(), Action: "other", Outcome: "success"}}
				if err := d.AppendAudit(ctx, batch); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	n, brk, err := a.VerifyAuditChain(ctx, org)
	if err != nil || brk != nil || n != 60 {
		t.Fatalf("verify: %d events, break %+v, %v", n, brk, err)
	}
}
