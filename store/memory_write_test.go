package store

import (
	"context"
	"errors"
	"testing"
)

func TestMemoryWritesRunTheirHookInTheTransaction(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	u := &User{Email: "mem@example.com", PasswordHash: "x"}
	org, err := db.CreateAccount(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	p := &Project{OrgID: org.ID, Name: "prod"}
	if err := db.CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	refused := errors.New("the index refused it")
	ok := func(context.Context, *Memory) error { return nil }
	no := func(context.Context, *Memory) error { return refused }
	mem := func() *Memory {
		return &Memory{OrgID: org.ID, ProjectID: p.ID, Scope: MemoryScopeProject, Key: "db-host", Text: "db-1"}
	}

	if _, err := db.SaveMemory(ctx, mem(), no); !errors.Is(err, refused) {
		t.Fatalf("save with a refusing hook: %v", err)
	}
	if _, n, _ := db.FindMemories(ctx, MemoryFilter{OrgID: org.ID, ProjectID: p.ID, Limit: 10}); n != 0 {
		t.Fatalf("a refused save left %d memories", n)
	}
	m := mem()
	if created, err := db.SaveMemory(ctx, m, ok); err != nil || !created {
		t.Fatalf("save: %v %v", created, err)
	}
	if created, err := db.SaveMemory(ctx, mem(), ok); err != nil || created {
		t.Fatalf("save of the same key: created %v (%v), want an update", created, err)
	}

	text := "db-2"
	if _, err := db.UpdateMemory(ctx, org.ID, p.ID, m.ID, MemoryPatch{Text: &text}, no); !errors.Is(err, refused) {
		t.Fatalf("update with a refusing hook: %v", err)
	}
	if got, _ := db.FindMemoryByID(ctx, org.ID, p.ID, m.ID); got.Text != "db-1" {
		t.Fatalf("a refused update changed the text to %q", got.Text)
	}
	var seen string
	if err := db.RefreshMemory(ctx, m.ID, func(_ context.Context, cur *Memory) error { seen = cur.Text; return nil }); err != nil || seen != "db-1" {
		t.Fatalf("refresh saw %q (%v)", seen, err)
	}

	if err := db.DeleteMemory(ctx, org.ID, p.ID, m.ID, no); !errors.Is(err, refused) {
		t.Fatalf("delete with a refusing hook: %v", err)
	}
	ran := false
	if err := db.IfMemoryGone(ctx, m.ID, func(context.Context) error { ran = true; return nil }); err != nil || ran {
		t.Fatalf("IfMemoryGone ran for a memory that exists (%v)", err)
	}
	if err := db.DeleteMemory(ctx, org.ID, p.ID, m.ID, ok); err != nil {
		t.Fatal(err)
	}
	if err := db.IfMemoryGone(ctx, m.ID, func(context.Context) error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("IfMemoryGone did not run for a deleted memory (%v)", err)
	}
	if err := db.RefreshMemory(ctx, m.ID, no); err != nil {
		t.Fatalf("refresh of a deleted memory ran its hook: %v", err)
	}
}
