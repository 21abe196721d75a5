package server_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/server/knowledge"
	"github.com/opsagent/opsagent/store"
	"github.com/opsagent/opsagent/store/storetest"
)

// An appliance used for a while moves into PostgreSQL (what opsagent
// migrate-to-postgres does), the copy verifies, and the same data directory
// served on PostgreSQL answers as before: same account, tasks, webhook
// events, memories and audit log.
func TestMigrateApplianceToPostgres(t *testing.T) {
	u := storetest.DatabaseURL(t)
	env := newEnv(t)
	if env.DB.Engine() != store.EngineSQLite {
		t.Skip("the source is an appliance")
	}
	owner := env.register("owner@example.com")
	f := newHook(t, env, owner, map[string]any{"provider": "generic", "scheme": "bearer", "rate_limit_per_minute": 10000})
	for i := 0; i < 5; i++ {
		if r := f.post(t, []byte(`{"title":"disk full","n":`+string(rune('0'+i))+`}`), bearer(f.secret)); r.Status != 202 {
			t.Fatalf("delivery: %d %s", r.Status, r.Body)
		}
	}
	f.dispatch(t)
	owner.must(201, "POST", "/api/memories", map[string]any{"key": "log-host", "title": "Where logs go", "text": "Logs ship to the quokka cluster."})
	owner.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": "disk.md", "content": "# Disk full\n\nRotate the logs of the capybara service.\n"})
	owner.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "facts", "name": "dns.md", "scope": "org", "content": "# DNS\n\nThe capybara resolver listens on 5353.\n"})
	docsBefore := hitNames(t, owner, "capybara")
	before := owner.must(200, "GET", "/api/tasks", nil).JSON()
	audit := owner.must(200, "GET", "/api/audit-logs?limit=200", nil).JSON()
	env.close()

	ctx := context.Background()
	src, err := store.Open(ctx, env.Dir+"/opsagent.db")
	if err != nil {
		t.Fatal(err)
	}
	dst, err := store.OpenPostgres(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := src.CopyTo(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Orgs == 0 || rep.AuditRows == 0 || rep.Searches == 0 {
		t.Fatalf("verification: %+v", rep)
	}
	// The knowledge documents (files on the appliance) move too, verified by searches.
	files, err := rag.Open(ctx, filepath.Join(env.Dir, "rag"), rag.Options{})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := knowledge.CopyDocuments(ctx, files, src, dst, t.TempDir())
	files.Close()
	if err != nil || !docs.OK() || docs.Documents != 3 || docs.Searches != 3 {
		t.Fatalf("documents: %+v %v", docs, err) // the memory's document is the third
	}
	if _, err := src.CopyTo(ctx, dst); err == nil {
		t.Fatal("a second move into a non-empty database was accepted")
	}
	src.Close()
	dst.Close()

	envDatabases.Store(env.Dir, u)
	pg := startEnv(t, env.Dir)
	if pg.DB.Engine() != store.EnginePostgres {
		t.Fatal("the restarted server is not on PostgreSQL")
	}
	c := pg.login("owner@example.com", "correct horse battery")
	c.Project = owner.Project
	after := c.must(200, "GET", "/api/tasks", nil).JSON()
	if after["total"] != before["total"] || after["total"] != float64(1) {
		t.Fatalf("tasks: %v then %v", before["total"], after["total"])
	}
	f.owner, f.env = c, pg
	if evs := f.events(t, ""); len(evs) != 5 {
		t.Fatalf("webhook events on PostgreSQL: %d", len(evs))
	}
	if got := hitNames(t, c, "capybara"); len(docsBefore) != 2 || !slices.Equal(got, docsBefore) {
		t.Fatalf("knowledge search: %v on the appliance, %v on PostgreSQL", docsBefore, got)
	}
	if got := hitNames(t, c, "quokka"); len(got) != 1 {
		t.Fatalf("memory's document on PostgreSQL: %v", got)
	}
	if m := c.must(200, "GET", "/api/memories?q=quokka", nil).JSON(); m["total"] != float64(1) {
		t.Fatalf("memory search on PostgreSQL: %v", m)
	}
	got := c.must(200, "GET", "/api/audit-logs?limit=200", nil).JSON()
	if got["total"].(float64) < audit["total"].(float64) {
		t.Fatalf("audit events: %v then %v", audit["total"], got["total"])
	}
	if v := c.must(200, "GET", "/api/audit-logs/verify", nil).JSON(); v["ok"] != true {
		t.Fatalf("audit verify on PostgreSQL: %v", v)
	}
}
