package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/rag"
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
	// An account with knowledge documents (files on the appliance), one of them org-wide.
	kb := &store.User{Email: "kb@example.com", Name: "kb"}
	if _, err := db.Register(ctx, kb, &store.NewLogin{Salt: []byte("salt"), RefreshHash: []byte("h"), Kind: "web", TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	proj := &store.Project{OrgID: kb.CurrentOrgID, Name: "prod"}
	if err := db.CreateProject(ctx, proj); err != nil {
		t.Fatal(err)
	}
	files, err := rag.Open(ctx, filepath.Join(dir, "rag"), rag.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, sc := range []rag.Scope{{OrgID: kb.CurrentOrgID, ProjectID: proj.ID}, {OrgID: kb.CurrentOrgID}} {
		for j := range 3 {
			body := fmt.Sprintf("# Runbook %d-%d\n\nRestart the wombat service on host %d.\n", i, j, j)
			if _, err := files.Put(ctx, sc, rag.CollectionRunbooks, fmt.Sprintf("r%d.md", j), []byte(body), []string{"ops"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	files.Close()
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
	if !strings.Contains(out.String(), "knowledge documents copied: 6; searches compared: 6") {
		t.Fatalf("documents: %s", out.String())
	}
	if docs, err := pg.ListKnowledgeDocs(ctx, kb.CurrentOrgID, "", rag.CollectionRunbooks); err != nil || len(docs) != 3 || docs[0].Title != "Runbook 1-0" {
		t.Fatalf("org-wide documents on PostgreSQL: %+v %v", docs, err)
	}
}
