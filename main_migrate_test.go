package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/store"
	"github.com/opsagent/opsagent/store/storetest"
)

func TestMigrateToPostgresCommand(t *testing.T) {
	u := storetest.DatabaseURL(t)
	dir := t.TempDir()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dir, "opsagent.db"))
	if err != nil {
		t.Fatal(err)
	}
	org := store.NewID()
	if err := db.AppendAudit(ctx, []*store.AuditRecord{{OrgID: org, Action: "a", Outcome: "success"}, {OrgID: org, Action: "b", Outcome: "success"}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	env := func(string) string { return "" }
	var out, errb bytes.Buffer
	if err := run(ctx, []string{"migrate-to-postgres"}, env, &out, &errb); err == nil || !strings.Contains(err.Error(), "database-url") {
		t.Fatalf("without a URL: %v", err)
	}
	err = run(ctx, []string{"migrate-to-postgres", "--data-dir", dir, "--database-url", u}, env, &out, &errb)
	if err != nil || !strings.Contains(out.String(), "verified.") || !strings.Contains(out.String(), "audit_events") {
		t.Fatalf("move: %v\n%s%s", err, out.String(), errb.String())
	}
	// The target is no longer empty; the appliance's events are there once.
	pg, err := store.OpenPostgres(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if n, brk, err := pg.VerifyAuditChain(ctx, org); err != nil || brk != nil || n != 2 {
		t.Fatalf("audit on PostgreSQL: %d %v %v", n, brk, err)
	}
}
