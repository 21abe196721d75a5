package server_test

import (
	"context"
	"testing"

	"github.com/opsagent/opsagent/store"
)

// listTasks reads the first page of tasks twice (the second read is the one
// a cached page would answer) and returns the names with their
// enabled flag and last status.
func listTasks(t *testing.T, c *client) map[string]map[string]any {
	t.Helper()
	var first []byte
	out := map[string]map[string]any{}
	for i := 0; i < 2; i++ {
		r := c.must(200, "GET", "/api/tasks?limit=50", nil)
		if i == 0 {
			first = r.Body
		} else if string(first) != string(r.Body) {
			t.Fatalf("two reads without a write differ:\n%s\n%s", first, r.Body)
		}
		if i == 1 {
			for _, it := range r.JSON()["items"].([]any) {
				m := it.(map[string]any)
				out[m["name"].(string)] = m
			}
		}
	}
	return out
}

// Every write that changes a task shows in the very next list read (the
// page cache is invalidated inside the writing request): create, rename,
// disable, trigger and the run's outcome, delete, bulk delete, and a write
// made by the scheduler's own store calls.
func TestTaskListCacheFollowsWrites(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := env.register("cache@example.com")
	withProject(t, env, c)
	a := createTask(t, c, map[string]any{"name": "a", "prompt": "p"})["id"].(string)
	if got := listTasks(t, c); len(got) != 1 {
		t.Fatalf("first page: %v", got)
	}
	b := createTask(t, c, map[string]any{"name": "b", "prompt": "p"})["id"].(string)
	if got := listTasks(t, c); len(got) != 2 || got["b"] == nil {
		t.Fatalf("after create: %v", got)
	}
	c.must(200, "PATCH", "/api/tasks/"+a, map[string]any{"name": "a2"})
	if got := listTasks(t, c); got["a2"] == nil || got["a"] != nil {
		t.Fatalf("after rename: %v", got)
	}
	c.must(200, "PATCH", "/api/tasks/"+a, map[string]any{"enabled": false})
	if got := listTasks(t, c); got["a2"]["enabled"] != false {
		t.Fatalf("after disable: %v", got["a2"])
	}
	c.must(200, "PATCH", "/api/tasks/"+a, map[string]any{"enabled": true})
	c.must(202, "POST", "/api/tasks/"+a+"/trigger", nil)
	// The run ends on its own (no LLM: it fails fast); once the task's own
	// page says so, the list must say so too.
	done := waitStatus(t, env, c, a, "failed")
	if got := listTasks(t, c); got["a2"]["last_status"] != "failed" || got["a2"]["last_session_id"] != done["last_session_id"] {
		t.Fatalf("after the run: list %v, task %v", got["a2"], done)
	}
	// A write straight through the store (as the scheduler and the webhook
	// pipeline make them) invalidates as well.
	ctx := context.Background()
	err := env.DB.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE tasks SET enabled = 0 WHERE id = ?`, b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := listTasks(t, c); got["b"]["enabled"] != false {
		t.Fatalf("after a store write: %v", got["b"])
	}
	c.must(204, "DELETE", "/api/tasks/"+b, nil)
	if got := listTasks(t, c); got["b"] != nil || len(got) != 1 {
		t.Fatalf("after delete: %v", got)
	}
	c.must(200, "POST", "/api/tasks/bulk-delete", map[string]any{"ids": []string{a}})
	if got := listTasks(t, c); len(got) != 0 {
		t.Fatalf("after bulk delete: %v", got)
	}
}

// The same query in two tenants, and in a restricted project of one org,
// never answers one caller with a page cached for another.
func TestTaskListCacheTenantIsolation(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	ada := env.register("ada@example.com")
	withProject(t, env, ada)
	bob := env.register("bob@example.com")
	withProject(t, env, bob)
	createTask(t, ada, map[string]any{"name": "ada's", "prompt": "p"})
	createTask(t, bob, map[string]any{"name": "bob's", "prompt": "p"})
	for i := 0; i < 2; i++ {
		if got := listTasks(t, ada); len(got) != 1 || got["ada's"] == nil {
			t.Fatalf("ada: %v", got)
		}
		if got := listTasks(t, bob); len(got) != 1 || got["bob's"] == nil {
			t.Fatalf("bob: %v", got)
		}
	}
	// Ada's page is cached; Bob naming Ada's project is still a 404.
	own := bob.Project
	bob.Project = ada.Project
	bob.must(404, "GET", "/api/tasks?limit=50", nil)
	bob.Project = own

	// Bob joins Ada's org as a member; a restricted project of hers stays
	// invisible to him although its page is cached for her.
	adaMe := ada.must(200, "GET", "/api/auth/me", nil).JSON()
	if err := env.DB.AddMember(t.Context(), adaMe["current_org_id"].(string), bob.userID(), "member"); err != nil {
		t.Fatal(err)
	}
	secret := ada.must(201, "POST", "/api/projects", map[string]any{"name": "secret", "restricted": true}).JSON()["id"].(string)
	ada.Project = secret
	createTask(t, ada, map[string]any{"name": "hidden", "prompt": "p"})
	if got := listTasks(t, ada); got["hidden"] == nil {
		t.Fatalf("ada's restricted project: %v", got)
	}
	bob.Token = bob.must(200, "POST", "/api/auth/switch-org/"+adaMe["current_org_id"].(string), nil).JSON()["access_token"].(string)
	bob.Project = secret
	bob.must(404, "GET", "/api/tasks?limit=50", nil)
	// Opening the project to the org shows it to him from the next request.
	ada.must(200, "PATCH", "/api/projects/"+secret, map[string]any{"restricted": false})
	if got := listTasks(t, bob); got["hidden"] == nil {
		t.Fatalf("bob after the project opened: %v", got)
	}
	ada.must(200, "PATCH", "/api/projects/"+secret, map[string]any{"restricted": true})
	bob.must(404, "GET", "/api/tasks?limit=50", nil)
}
